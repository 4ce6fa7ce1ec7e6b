// What the endpoint_metrics policies of one VM share and what runs outside requests: the
// in-flight tracker (Redis reads on tick), the scraper (poll source, answers on the root), the
// latency tracker (fed by lease begin/end through Accounting's observer), and the hosts each
// policy last saw (ticks have no stream, so get_upstream_hosts is not available there).
// Failure behaviour: never throws; a policy without known hosts is skipped on tick.
import { Accounting, LeaseObserver } from "../lease/accounting";
import { Lease } from "../lease/lease";
import { LbRequest } from "../request/request";
import { MetricsSettings, SOURCE_POLL } from "../../config/metrics_settings";
import { InflightTracker } from "./inflight";
import { LatencyTracker } from "./latency";
import { MetricsCache } from "./metrics_cache";
import { Scraper } from "./scraper";
import { Stats } from "../stats";
import * as host from "../../host/calls";

/** Leases feed the latency EWMA; a local lease (Redis unavailable) moves its request's pick from
 *  the tracker's counts to the local counts, which inflight() adds (counted once, not twice). */
class LeaseEnds extends LeaseObserver {
  constructor(public latency: LatencyTracker, public inflight: InflightTracker) { super(); }
  onLeased(lease: Lease, s: LbRequest, now: f64): void {
    this.latency.begin(changetype<usize>(lease), now);
    if (lease.local) this.inflight.takeBack(s.counted, false);
  }
  onReleased(lease: Lease, now: f64): void {
    this.latency.end(changetype<usize>(lease), lease.host, now);
  }
}

/** A policy's scrape targets: its cache (settings) and the hosts of its last request. */
export class ScrapeTarget {
  hosts: string[] = [];
  constructor(public cache: MetricsCache) {}
}

export class MetricsRuntime {
  readonly inflight: InflightTracker = new InflightTracker();
  readonly scraper: Scraper = new Scraper();
  readonly latency: LatencyTracker;
  readonly targets: ScrapeTarget[] = [];
  private refreshMs: f64 = 1e18;
  private period: i64 = 0;
  private readonly createdMs: f64 = host.nowMillis();

  constructor(accounting: Accounting, alpha: f64, public stats: Stats) {
    this.latency = new LatencyTracker(alpha);
    accounting.observer = new LeaseEnds(this.latency, this.inflight);
  }

  /** Registers a policy's settings; returns the target it updates with its candidates. */
  register(cache: MetricsCache, usesRedis: bool): ScrapeTarget {
    const t = new ScrapeTarget(cache);
    this.targets.push(t);
    const s: MetricsSettings = cache.s;
    if (usesRedis) {
      this.refreshMs = min(this.refreshMs, <f64>s.inflightRefreshMs);
      this.widenPeriod(s.inflightRefreshMs);
    }
    if (s.source == SOURCE_POLL) this.widenPeriod(s.scrapeIntervalMs);
    return t;
  }

  private widenPeriod(ms: i64): void {
    this.period = this.period == 0 ? ms : min(this.period, ms);
  }

  /** The request's pick is counted in flight on `address` until the request ends (ended). */
  notePick(r: LbRequest, address: string): void {
    this.inflight.takeBack(r.counted, false); // a request picked again counts once
    r.counted = this.inflight.notePick(r.pool, address, <f64>r.cost);
  }

  /** The request ended (its lease, if any, released): its pick is no longer in flight. */
  ended(r: LbRequest): void {
    const lease = r.lease;
    this.inflight.takeBack(r.counted, lease !== null && !lease.local);
  }

  /** Tick period these policies need (0: none). */
  tickPeriodMs(): i64 { return this.period; }

  onTick(now: f64): void {
    if (this.refreshMs < 1e18) this.inflight.tick(now, this.refreshMs);
    for (let i = 0; i < this.targets.length; i++) {
      const t = this.targets[i];
      if (t.cache.s.source == SOURCE_POLL && t.hosts.length > 0) this.scraper.scrape(t.hosts, t.cache, now);
    }
    // A VM that has seen no request knows no hosts: it leaves the (process-wide) gauge to the others.
    const age = this.stalestAgeMs(now);
    if (age >= 0) this.stats.metricsAgeMs(age);
  }

  /** Over the policies with known hosts: the age of their freshest metrics, the largest such age (-1: none). */
  private stalestAgeMs(now: f64): f64 {
    let worst: f64 = -1;
    for (let i = 0; i < this.targets.length; i++) {
      const t = this.targets[i];
      if (t.hosts.length == 0) continue;
      const newest = t.cache.newestObservedMs(t.hosts);
      worst = max(worst, now - max(newest, this.createdMs));
    }
    return worst;
  }

  onHttpCallResponse(token: u32, bodySize: u32, now: f64): bool {
    return this.scraper.onResponse(token, bodySize, now);
  }
}
