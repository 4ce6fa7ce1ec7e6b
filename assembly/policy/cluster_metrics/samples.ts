// Fixed-size ring of the last N samples with their mean (Higress's utils.FixedQueue, whose mean
// cluster_metrics' latency modes compare). Pure, never traps.
export class SampleRing {
  private values: StaticArray<f64>;
  private next: i32 = 0;
  private count: i32 = 0;
  private sum: f64 = 0;

  constructor(capacity: i32) {
    this.values = new StaticArray<f64>(capacity > 0 ? capacity : 1);
  }

  get size(): i32 { return this.count; }

  push(v: f64): void {
    const cap = this.values.length;
    if (this.count == cap) this.sum -= this.values[this.next];
    else this.count++;
    this.values[this.next] = v;
    this.sum += v;
    this.next = (this.next + 1) % cap;
    // Once per lap, recompute: a running sum drifts after many float subtractions.
    if (this.next == 0) {
      let s: f64 = 0;
      for (let i = 0; i < this.count; i++) s += this.values[i];
      this.sum = s;
    }
  }

  /** Mean of the samples held; 0 with none (so an unsampled service looks fastest, as in Higress). */
  mean(): f64 {
    return this.count == 0 ? 0 : this.sum / <f64>this.count;
  }
}

/** The last N picks (service indices): each service's share of them, for `rate_limit`. */
export class PickWindow {
  private picks: StaticArray<i32>;
  private counts: StaticArray<i32>;
  private next: i32 = 0;
  private total: i32 = 0;

  constructor(size: i32, services: i32) {
    this.picks = new StaticArray<i32>(size > 0 ? size : 1);
    this.counts = new StaticArray<i32>(services > 0 ? services : 1);
  }

  record(service: i32): void {
    if (service < 0 || service >= this.counts.length) return;
    const cap = this.picks.length;
    if (this.total == cap) this.counts[this.picks[this.next]]--;
    else this.total++;
    this.picks[this.next] = service;
    this.counts[service]++;
    this.next = (this.next + 1) % cap;
  }

  /** Share of the window's picks that went to `service`; 0 before any pick. */
  share(service: i32): f64 {
    if (this.total == 0 || service < 0 || service >= this.counts.length) return 0;
    return <f64>this.counts[service] / <f64>this.total;
  }
}
