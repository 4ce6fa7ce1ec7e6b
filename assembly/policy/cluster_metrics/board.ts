// cluster_metrics' per-VM view of its services and the four selections (higress-parity.md
// section 8), with Higress's defects replaced by the sane reading (README "cluster_metrics"):
// - rate limit: a service whose share of the last queue_size picks is >= rate_limit is skipped
//   (unless every service is); rate_limit 1 = no limit (Higress: lifetime shares, and 1.0 switches
//   away from a service that took every request so far);
// - LeastBusy / LeastTotalLatency / LeastFirstTokenLatency: the lowest in-flight count / mean total
//   latency / mean TTFT among the allowed services (0 before any sample: unsampled services are
//   tried first, as in Higress), ties broken uniformly at random (Higress: Go map order);
// - AdaptiveScore: allowed by rate, then not cooling down (if none, the previous set), then
//   p2c_choices distinct services sampled uniformly, lowest score, ties at random.
// Pure (time and randomness passed in), never traps: an index outside the list is ignored.
import { Xorshift } from "../../util/prng";
import { AdaptiveState, ScoreWeights, adaptiveScore } from "./adaptive";
import { PickWindow, SampleRing } from "./samples";
import { ClusterMetricsSettings, MODE_ADAPTIVE_SCORE, MODE_LEAST_BUSY, MODE_LEAST_FIRST_TOKEN_LATENCY } from "../../config/cluster_metrics_settings";

export class ServiceStats {
  ongoing: i64 = 0;
  ttft: SampleRing;
  total: SampleRing;
  adaptive: AdaptiveState = new AdaptiveState();
  constructor(queueSize: i32) {
    this.ttft = new SampleRing(queueSize);
    this.total = new SampleRing(queueSize);
  }
}

/** A candidate of AdaptiveScore with its local score (what the global variant sends to Redis). */
export class ScoredService {
  constructor(public index: i32, public score: f64) {}
}

export class ServiceBoard {
  readonly stats: ServiceStats[] = [];
  readonly window: PickWindow;
  readonly weights: ScoreWeights;

  constructor(public s: ClusterMetricsSettings) {
    this.window = new PickWindow(s.queueSize, s.services.length);
    this.weights = new ScoreWeights(s.ttftWeight, s.totalLatencyWeight, s.errorPenalty);
    for (let i = 0; i < s.services.length; i++) this.stats.push(new ServiceStats(s.queueSize));
  }

  get size(): i32 { return this.stats.length; }

  indexOf(service: string): i32 { return this.s.services.indexOf(service); }

  /** Services allowed by rate_limit (every service when all are over it). */
  allowed(): i32[] {
    const out = new Array<i32>();
    for (let i = 0; i < this.size; i++) {
      if (this.s.rateLimit >= 1.0 || this.window.share(i) < this.s.rateLimit) out.push(i);
    }
    if (out.length > 0) return out;
    for (let i = 0; i < this.size; i++) out.push(i);
    return out;
  }

  /** The metric a non-adaptive mode minimises. */
  private metric(mode: i32, i: i32): f64 {
    const st = this.stats[i];
    if (mode == MODE_LEAST_BUSY) return <f64>st.ongoing;
    if (mode == MODE_LEAST_FIRST_TOKEN_LATENCY) return st.ttft.mean();
    return st.total.mean();
  }

  /** The service (index) for a new request under the configured mode. */
  select(nowMs: f64, rng: Xorshift): i32 {
    if (this.size == 1) return 0;
    const mode = this.s.mode;
    if (mode == MODE_ADAPTIVE_SCORE) return this.lowest(this.adaptiveCandidates(nowMs, rng), rng);
    const c = this.allowed();
    const scored = new Array<ScoredService>();
    for (let k = 0; k < c.length; k++) scored.push(new ScoredService(c[k], this.metric(mode, c[k])));
    return this.lowest(scored, rng);
  }

  /** AdaptiveScore's candidates with their local scores (p2c-sampled). */
  adaptiveCandidates(nowMs: f64, rng: Xorshift): ScoredService[] {
    let c = this.allowed();
    const warm = new Array<i32>();
    for (let k = 0; k < c.length; k++) if (!this.stats[c[k]].adaptive.coolingDown(nowMs)) warm.push(c[k]);
    if (warm.length > 0) c = warm;
    // Partial Fisher-Yates: p2c_choices distinct services, uniformly.
    const p = this.s.p2cChoices;
    if (c.length > p) {
      for (let k = 0; k < p; k++) {
        const j = k + <i32>rng.nextBelow(<u32>(c.length - k));
        const t = c[k]; c[k] = c[j]; c[j] = t;
      }
      c = c.slice(0, p);
    }
    const out = new Array<ScoredService>();
    for (let k = 0; k < c.length; k++) {
      out.push(new ScoredService(c[k], adaptiveScore(this.stats[c[k]].adaptive, this.stats[c[k]].ongoing, nowMs, this.weights)));
    }
    return out;
  }

  /** The lowest score, ties broken uniformly at random. */
  lowest(c: ScoredService[], rng: Xorshift): i32 {
    let best = -1;
    let bestScore = Infinity;
    let ties: u32 = 0;
    for (let k = 0; k < c.length; k++) {
      const v = c[k].score;
      if (best < 0 || v < bestScore) { best = c[k].index; bestScore = v; ties = 1; }
      else if (v == bestScore) { ties++; if (rng.nextBelow(ties) == 0) best = c[k].index; }
    }
    return best < 0 ? 0 : best;
  }

  /** A request was sent to service i. */
  onPicked(i: i32): void {
    if (i < 0 || i >= this.size) return;
    this.stats[i].ongoing++;
    this.window.record(i);
  }

  /** First response bytes of a request to i after `ms` (failed: Higress's doubling penalty). */
  onFirstToken(i: i32, ms: f64, failed: bool): void {
    if (i < 0 || i >= this.size) return;
    let d = ms;
    if (failed) {
      for (let k = 0; k < this.size; k++) d = max(d, this.stats[k].ttft.mean());
      d *= 2.0;
    }
    this.stats[i].ttft.push(d);
    this.stats[i].adaptive.recordTtft(d, this.s.ewmaBeta);
  }

  /**
   * A request to i ended after `ms`. outcome: 1 success, -1 failure (penalised as in Higress),
   * 0 no verdict (the client went away before any response): only the in-flight count changes.
   */
  onEnded(i: i32, ms: f64, outcome: i32, nowMs: f64): void {
    if (i < 0 || i >= this.size) return;
    const st = this.stats[i];
    if (st.ongoing > 0) st.ongoing--;
    if (outcome == 0) return;
    let d = ms;
    const failed = outcome < 0;
    if (failed) {
      for (let k = 0; k < this.size; k++) d = max(d, this.stats[k].total.mean());
      d *= 2.0;
    }
    st.total.push(d);
    st.adaptive.recordTotal(d, this.s.ewmaBeta, failed, nowMs, this.s.failureCooldownMs);
  }
}
