// The `metrics` text of one host in Higress's get_upstream_hosts answer (HostSnapshot keeps the
// byte range of each host's JSON value). Decoded only when the cache decides to look (at most
// every reparseIntervalMs per host), never per request. Failure behaviour: "" for a value that is
// not a JSON object with a string `metrics`.
import { HostSnapshot, HostEntry } from "../candidates/upstream_hosts";
import { parseJson } from "../../json/parse";

export function metricsTextOf(snapshot: HostSnapshot, entry: HostEntry): string {
  const len = entry.valueEnd - entry.valueStart;
  if (len <= 0 || entry.valueEnd > snapshot.raw.byteLength) return "";
  const parsed = parseJson(Uint8Array.wrap(snapshot.raw, entry.valueStart, len));
  const root = parsed.value;
  if (!parsed.ok || root === null) return "";
  const metrics = root.get("metrics");
  return metrics !== null && metrics.isString() ? metrics.str() : "";
}

/** The snapshot entry of `address`, or null. */
export function entryOf(snapshot: HostSnapshot, address: string): HostEntry | null {
  for (let i = 0; i < snapshot.hosts.length; i++) {
    if (snapshot.hosts[i].address == address) return snapshot.hosts[i];
  }
  return null;
}
