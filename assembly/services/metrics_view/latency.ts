// Per-host latency estimates (exponentially weighted moving averages, per VM) for the weighted
// scorer's latency term: time to first byte (decision -> upstream response headers, what queueing
// and prefill cost) and total time (lease taken -> lease released). The scorer reads TTFT when a
// host has one, else the total. Failure behaviour: none; hosts never observed read NaN ("unknown").

import { roomFor } from "../../util/host_maps";

export class LatencyTracker {
  private ewma: Map<string, f64> = new Map();
  private ttft: Map<string, f64> = new Map();
  private started: Map<usize, f64> = new Map();

  constructor(public alpha: f64) {}

  /** Hosts with an estimate kept (at most HOSTS_KEPT per kind). */
  get hostsKept(): i32 { return max(this.ewma.size, this.ttft.size); }

  /** TTFT EWMA when known, else total-time EWMA, else NaN. */
  latencyMs(address: string): f64 {
    if (this.ttft.has(address)) return this.ttft.get(address);
    return this.totalMs(address);
  }

  totalMs(address: string): f64 {
    return this.ewma.has(address) ? this.ewma.get(address) : NaN;
  }

  observe(address: string, ms: f64): void {
    this.update(this.ewma, address, ms);
  }

  observeFirstByte(address: string, ms: f64): void {
    this.update(this.ttft, address, ms);
  }

  private update(m: Map<string, f64>, address: string, ms: f64): void {
    if (!(ms >= 0)) return;
    roomFor(m, address);
    const old = m.has(address) ? m.get(address) : NaN;
    m.set(address, isNaN(old) ? ms : old + this.alpha * (ms - old));
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
