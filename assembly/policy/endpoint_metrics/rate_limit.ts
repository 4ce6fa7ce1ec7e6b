// rate_limit: a host above its share of the last window_size picks (within window_seconds)
// yields to a random other candidate, one under its share if any. The window is shared by the
// gateway's VMs (shared data) unless rateLimitScope is vm (Higress).
// Inputs: candidates, the chosen host. Config: rate_limit, window_size, window_seconds,
// rateLimitScope. Failure behaviour: no other candidate -> the chosen host stays.
import { LbConfig } from "../../config/lb_config";
import { CandidateSet } from "../../services/candidates/candidates";
import { Xorshift } from "../../util/prng";
import { SharedPicks } from "./shared_picks";

/** A shared window this VM has not used for this long (at least) is emptied when it moves to a
 *  new one: every change of the candidate set (a pod replaced, a health flap) names a new window,
 *  and Envoy's shared data has no delete, so old windows (12 bytes a pick, up to window_size) would
 *  stay for the Envoy's life. */
const UNUSED_MIN_MS: f64 = 60000;

export class RateLimit {
  readonly picks: SharedPicks;
  /** The shared windows this VM used, by key, and when it last did. */
  private used: Map<string, f64> = new Map();
  /** A window's key less its candidate set: one window per candidate set and window shape, the
   *  same name in every VM of the gateway (rules of other sizes or periods on the same pods would
   *  cut each other's window). */
  private readonly keyHead: string;

  constructor(private cfg: LbConfig) {
    const s = cfg.metrics;
    this.picks = new SharedPicks("", s.rateLimitScope == "gateway", s.windowSize, <f64>s.windowSeconds * 1000);
    this.keyHead = "llmlb.empicks|" + cfg.keyPrefix + "|" + s.windowSize.toString() + "|" + s.windowSeconds.toString() + "|";
  }

  /** The host to use instead of `chosen` ("" to keep it); records the final pick in the window. */
  redirect(c: CandidateSet, chosen: string, now: f64, rng: Xorshift): string {
    const limit = this.cfg.metrics.rateLimit;
    const key = this.keyHead + c.fp;
    if (this.picks.shared) {
      if (!this.used.has(key)) this.emptyUnused(now);
      this.used.set(key, now);
    }
    this.picks.key = key;
    this.picks.refresh();
    let other = "";
    if (this.picks.window.overLimit(chosen, limit, now)) other = this.otherHost(c, chosen, limit, now, rng.nextBelow(<u32>c.size));
    this.picks.record(other.length > 0 ? other : chosen, now);
    return other;
  }

  /** Empties the shared windows this VM has not used for UNUSED_MIN_MS or 10 windows (another VM
   *  still using one starts it again, as after a change of the candidate set). */
  private emptyUnused(now: f64): void {
    const idle = max(UNUSED_MIN_MS, 10.0 * <f64>this.cfg.metrics.windowSeconds * 1000);
    const keys = this.used.keys();
    for (let i = 0; i < keys.length; i++) {
      const at = this.used.get(keys[i]);
      if (now - at < idle) continue;
      this.picks.empty(keys[i]);
      this.used.delete(keys[i]);
    }
  }

  /** A random candidate other than `chosen`, preferring those under the limit; "" if none. */
  private otherHost(c: CandidateSet, chosen: string, limit: f64, now: f64, start: u32): string {
    let fallback = "";
    for (let k = 0; k < c.size; k++) {
      const h = c.hosts[(<i32>start + k) % c.size];
      if (h == chosen) continue;
      if (!this.picks.window.overLimit(h, limit, now)) return h;
      if (fallback.length == 0) fallback = h;
    }
    return fallback;
  }
}
