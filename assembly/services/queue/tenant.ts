// The tenant a queued request is counted under (lua/queue.lua's fairness): the tenant header's
// value, which the client controls and Envoy lets run to its header limit (60 KiB by default),
// kept at most TENANT_MAX_CHARS in Redis: a longer value is its head and a hash of the whole, so
// two values stay two tenants and no value stores more than that in the queue's tenant hash.
import { fnv1a64Hex } from "../../util/fnv";

export const TENANT_MAX_CHARS: i32 = 64;
const TENANT_HEAD_CHARS: i32 = TENANT_MAX_CHARS - 17; // "#" + 16 hex digits

export function tenantKey(value: string): string {
  if (value.length <= TENANT_MAX_CHARS) return value;
  let head = TENANT_HEAD_CHARS;
  const last = value.charCodeAt(head - 1);
  if (last >= 0xd800 && last <= 0xdbff) head--; // never half a surrogate pair
  return value.substring(0, head) + "#" + fnv1a64Hex(value);
}
