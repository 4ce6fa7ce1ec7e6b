// endpoint_hash's Redis key for a session (the hash header's raw value bytes):
// - compat: Higress's key (PR #3967, higress-parity.md section 7)
//   `higress:endpoint_hash_table:<route>:<cluster>:<8 hex of FNV-1a-32>`, shared with gateways still
//   on Higress's plugin (not Redis Cluster safe: no hash tag, as Higress);
// - otherwise `<pool ns>:s:<16 hex of FNV-1a-64>`: inside the pool's hash tag (one Redis Cluster
//   slot with the leases it is checked against) and 64-bit, so two sessions collide only after
//   billions of sessions instead of tens of thousands.
// Pure, never traps.
import { fnv1a32Hex, fnv1a64Bytes } from "../../util/fnv";
import { u64ToHexLower } from "../../util/hex";

export const HIGRESS_KEY_PREFIX = "higress:endpoint_hash_table:";

export function stickyKey(compat: bool, route: string, cluster: string, poolNs: string, value: Uint8Array): string {
  if (compat) return HIGRESS_KEY_PREFIX + route + ":" + cluster + ":" + fnv1a32Hex(value);
  return poolNs + ":s:" + u64ToHexLower(fnv1a64Bytes(value));
}
