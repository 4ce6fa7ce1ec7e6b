// The `metrics` text of one host in Higress's get_upstream_hosts answer (HostSnapshot keeps the
// byte range of each host's JSON value). Decoded only when the cache decides to look (at most
// every reparseIntervalMs per host), never per request, as UTF-8 bytes into a reused buffer: the
// Prometheus scanner reads bytes, so the 64 KiB text never becomes a UTF-16 string.
// Failure behaviour: empty for a value that is not a JSON object with a string `metrics`.
import { HostSnapshot, HostEntry } from "../candidates/upstream_hosts";
import { parseJson } from "../../json/parse";
import { ScratchBytes } from "../../json/unescape";
import { stringMemberInto } from "../../json/string_member";

/** The host's metrics text as UTF-8 bytes: a view of the snapshot or of `scratch`, valid until
 *  the scratch's next use. */
export function metricsBytesOf(snapshot: HostSnapshot, entry: HostEntry, scratch: ScratchBytes): Uint8Array {
  const len = entry.valueEnd - entry.valueStart;
  if (len <= 0 || entry.valueEnd > snapshot.raw.byteLength) return new Uint8Array(0);
  const value = Uint8Array.wrap(snapshot.raw, entry.valueStart, len);
  // Higress's shape (string members only) in one pass; anything else through the full parser.
  const direct = stringMemberInto(value, "metrics", scratch);
  if (direct !== null) return direct;
  const parsed = parseJson(value);
  const root = parsed.value;
  if (!parsed.ok || root === null) return new Uint8Array(0);
  const metrics = root.get("metrics");
  return metrics !== null && metrics.isString() ? metrics.strBytesIn(scratch) : new Uint8Array(0);
}

/** The snapshot entry of `address`, or null. */
export function entryOf(snapshot: HostSnapshot, address: string): HostEntry | null {
  for (let i = 0; i < snapshot.hosts.length; i++) {
    if (snapshot.hosts[i].address == address) return snapshot.hosts[i];
  }
  return null;
}
