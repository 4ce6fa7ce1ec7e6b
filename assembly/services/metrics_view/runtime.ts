// What the endpoint_metrics policies of one VM share and what runs outside requests: the
// in-flight tracker (Redis reads on tick), the scraper (poll source, answers on the root), the
// latency tracker (fed by lease begin/end through Accounting's observer), and the hosts each
// policy last saw (ticks have no stream, so get_upstream_hosts is not available there).
// Failure behaviour: never throws; a policy without known hosts is skipped on tick.
import { Accounting, LeaseObserver } from "../lease/accounting";
import { Lease } from "../lease/lease";
import { MetricsSettings, SOURCE_POLL } from "../../config/metrics_settings";
import { InflightTracker } from "./inflight";
import { LatencyTracker } from "./latency";
import { MetricsCache } from "./metrics_cache";
import { Scraper } from "./scraper";

/** Lease ends feed the latency EWMA and take the request out of this VM's in-flight view. */
class LeaseEnds extends LeaseObserver {
  constructor(public latency: LatencyTracker, public inflight: InflightTracker) { super(); }
  onLeased(lease: Lease, now: f64): void { this.latency.begin(changetype<usize>(lease), now); }
  onReleased(lease: Lease, now: f64): void {
    this.latency.end(changetype<usize>(lease), lease.host, now);
    this.inflight.noteRelease(lease.pool, lease.host, <f64>lease.cost);
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

  constructor(accounting: Accounting, alpha: f64) {
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

  /** Tick period these policies need (0: none). */
  tickPeriodMs(): i64 { return this.period; }

  onTick(now: f64): void {
    if (this.refreshMs < 1e18) this.inflight.tick(now, this.refreshMs);
    for (let i = 0; i < this.targets.length; i++) {
      const t = this.targets[i];
      if (t.cache.s.source == SOURCE_POLL && t.hosts.length > 0) this.scraper.scrape(t.hosts, t.cache, now);
    }
  }

  onHttpCallResponse(token: u32, bodySize: u32, now: f64): bool {
    return this.scraper.onResponse(token, bodySize, now);
  }
}
