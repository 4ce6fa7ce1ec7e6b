// Per-host latency estimate (exponentially weighted moving average, per VM) for the weighted
// scorer's latency term. Fed with the total time of each request that ran on the host (lease
// taken -> lease released), which is what the plugin can observe without hooking response
// headers. Failure behaviour: none; hosts never observed read NaN ("unknown").

export class LatencyTracker {
  private ewma: Map<string, f64> = new Map();
  private started: Map<usize, f64> = new Map();

  constructor(public alpha: f64) {}

  latencyMs(address: string): f64 {
    return this.ewma.has(address) ? this.ewma.get(address) : NaN;
  }

  observe(address: string, ms: f64): void {
    if (!(ms >= 0)) return;
    const old = this.latencyMs(address);
    this.ewma.set(address, isNaN(old) ? ms : old + this.alpha * (ms - old));
  }

  /** Remembers when a request (keyed by an object address, e.g. its lease) started. */
  begin(key: usize, now: f64): void {
    // A lease that never ends (should not happen) must not grow the map forever.
    if (this.started.size > 100000) this.started.clear();
    this.started.set(key, now);
  }

  /** Ends a request started with begin(); ignored when unknown. */
  end(key: usize, address: string, now: f64): void {
    if (!this.started.has(key)) return;
    const t0 = this.started.get(key);
    this.started.delete(key);
    this.observe(address, now - t0);
  }
}
