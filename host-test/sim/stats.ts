// Counters and latency histograms an engine accumulates for /metrics.
// Bucket bounds follow vLLM's (seconds). Values observed are SIMULATED seconds. Never fails.

export const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0];
export const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0];
export const E2E_BUCKETS = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0];

export class Histogram {
  readonly bounds: readonly number[];
  /** Non-cumulative count per bound; the +Inf overflow is count - sum(counts). */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
    this.counts = bounds.map(() => 0);
  }

  observe(value: number): void {
    this.sum += value;
    this.count++;
    const index = this.bounds.findIndex((bound) => value <= bound);
    if (index >= 0) this.counts[index]++;
  }

  /** Cumulative counts per bound (what Prometheus `_bucket{le=...}` lines carry). */
  cumulative(): number[] {
    let running = 0;
    return this.counts.map((count) => (running += count));
  }
}

export type FinishReason = "stop" | "length" | "abort";

export class EngineStats {
  promptTokens = 0;
  generationTokens = 0;
  preemptions = 0;
  readonly finished: Record<FinishReason, number> = { stop: 0, length: 0, abort: 0 };
  readonly ttft = new Histogram(TTFT_BUCKETS);
  readonly itl = new Histogram(ITL_BUCKETS);
  readonly e2e = new Histogram(E2E_BUCKETS);
}
