// What a policy may use besides its request: one bundle per root context (VM + plugin), handed to
// each policy when the registry builds it. Lease accounting (acquire / release / fallback),
// candidates, the VM's random source and metrics, and endpoint_metrics' shared runtime (created by
// the first policy that asks for it, reset on every configuration).
import { Accounting } from "./lease/accounting";
import { CandidateSource } from "./candidates/source";
import { MetricsRuntime } from "./metrics_view/runtime";
import { Stats } from "./stats";
import { AdmissionQueue } from "./queue/admission";
import { Xorshift } from "../util/prng";

export class Services {
  readonly candidates: CandidateSource = new CandidateSource();
  /** Gateway-side queueing (queueCapacity > 0). */
  readonly queue: AdmissionQueue;
  private metrics: MetricsRuntime | null = null;
  /** Requests a policy holds at the gateway (predicted_latency's sloHoldMs): the tick runs fast. */
  heldStreams: i32 = 0;

  constructor(public rng: Xorshift, public stats: Stats, public accounting: Accounting) {
    this.queue = new AdmissionQueue(stats);
  }

  /** Drops what belonged to the previous configuration. */
  reset(): void {
    this.candidates.reset();
    this.queue.reset();
    this.metrics = null;
    this.heldStreams = 0;
    this.accounting.observer = null;
  }

  /** endpoint_metrics' shared runtime (scraper, in-flight, latency); created on first use. */
  metricsRuntime(latencyAlpha: f64): MetricsRuntime {
    let mr = this.metrics;
    if (mr === null) { mr = new MetricsRuntime(this.accounting, latencyAlpha, this.stats); this.metrics = mr; }
    return mr;
  }

  /** The runtime if some policy of this configuration uses it. */
  metricsRuntimeIfAny(): MetricsRuntime | null { return this.metrics; }
}
