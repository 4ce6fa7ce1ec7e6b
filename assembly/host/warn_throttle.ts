// Warnings on the request path, throttled: an error reply Redis gives every call (READONLY after a
// failover, OOM, NOPERM, a script refusing its arguments) would otherwise be one log line per
// request, thousands a second, burying everything else. Each kind (a fixed text such as "acquire
// failed") is logged at most once per WARN_EVERY_MS per VM, with the number of the same kind left
// out since. Never throws.
import * as host from "./calls";

export const WARN_EVERY_MS: f64 = 10000;

class Kind {
  lastMs: f64 = -1e18;
  suppressed: i64 = 0;
}

/** Kinds are the call sites' fixed texts: a handful per VM. */
const kinds = new Map<string, Kind>();

/** What `warn` logs for kind and detail at now (null: suppressed); pure but for the kind's state. */
export function throttledLine(kind: string, detail: string, now: f64): string | null {
  let k: Kind;
  if (kinds.has(kind)) k = kinds.get(kind);
  else { k = new Kind(); kinds.set(kind, k); }
  if (now - k.lastMs < WARN_EVERY_MS) { k.suppressed++; return null; }
  const more = k.suppressed > 0 ? " (" + k.suppressed.toString() + " more since the last such warning)" : "";
  k.lastMs = now;
  k.suppressed = 0;
  return kind + (detail.length > 0 ? ": " + detail : "") + more;
}

/** Logs `kind: detail` at `level`, at most once per WARN_EVERY_MS for the kind. */
export function logThrottled(level: host.LogLevel, kind: string, detail: string): void {
  const line = throttledLine(kind, detail, host.nowMillis());
  if (line !== null) host.log(level, line);
}

/** Logs `kind: detail` at Warn, at most once per WARN_EVERY_MS for the kind. */
export function warnThrottled(kind: string, detail: string): void {
  logThrottled(host.LogLevel.Warn, kind, detail);
}
