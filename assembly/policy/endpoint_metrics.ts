// endpoint_metrics: picks from the model servers' own load (vLLM / SGLang /metrics), fresher and
// cheaper than Higress's version (defect 8):
// - metrics come from the health check body (Higress) or a scraper (metricsSource: poll), are
//   parsed once per change per gateway (MetricsCache), and corrected by in-flight counts for the
//   requests sent since the scrape (HostView.effectiveWaiting);
// - saturated hosts (queueLimit / kvLimit; stale ones per stalePolicy) are avoided; when all are,
//   the request is shed by priority: high bypasses, low is shed at lowPriorityFraction;
// - then metric_policy default (GIE filter tree) | least | most (band on target_metric), or
//   scoring: weighted; random among survivors; rate_limit (window shared by the gateway's VMs);
// - the chosen host is leased like global_least_request (lua/charge.lua), or locally without Redis.
// Hosts without any usable metrics (no health check on /metrics, scraper down): least in-flight.
// scoring: weighted with prefixWeight > 0 and Redis: the request's prefix levels (prefix_cache's
// keys and tree) are read first (one MGET), each host scores the share of the prefix it served,
// and the levels are pointed at the chosen host afterwards (lua/prefix_write.lua, not awaited).
// Failure behaviour: never throws; no candidate -> Pass (Envoy's LB); Redis down -> local lease.
import { Policy } from "./policy";
import { Verdict } from "./verdict";
import { LbConfig } from "../config/lb_config";
import { METRIC_POLICY_LEAST, METRIC_POLICY_MOST, SCORING_WEIGHTED, SOURCE_POLL } from "../config/metrics_settings";
import { LbStream, PRIORITY_HIGH, PRIORITY_LOW } from "../filter/stream";
import { CandidateSet } from "../lb/candidates";
import { HostSnapshot } from "../lb/upstream_hosts";
import { HostView } from "../metrics_policy/host_view";
import { filterTree } from "../metrics_policy/filter_tree";
import { allIndices, highestBand, lowestBand } from "../metrics_policy/bands";
import { weightedScores } from "../metrics_policy/weighted";
import { anyFresh, unsaturated } from "../metrics_policy/saturation";
import { MetricsCache } from "../metrics_policy/metrics_cache";
import { SharedPicks } from "../metrics_policy/shared_picks";
import { MetricsRuntime, ScrapeTarget } from "../metrics_policy/runtime";
import { adapterOf } from "../metrics_policy/adapter";
import * as host from "../host/calls";
import { RedisReplyHandler } from "../redis/client";
import { RespValue } from "../redis/resp";
import { KeyOptions, keyOptionsFrom, prefixLevelKeys } from "../prefix/keys";
import { prefixScores } from "../metrics_policy/prefix_signal";
import { PREFIX_WRITE_SCRIPT } from "../lease/scripts";

/** Fire-and-forget level writes: a failure only loses affinity, it is logged. */
class PrefixWrites extends RedisReplyHandler {
  onReply(ok: bool, reply: RespValue | null): void {
    if (!ok || (reply !== null && reply.isError())) host.log(host.LogLevel.Warn, "prefix_write failed" + (reply !== null ? ": " + reply.str : ""));
  }
}

/** The MGET of a request's prefix levels; the pick resumes when it answers. */
class PrefixRead extends RedisReplyHandler {
  constructor(public policy: EndpointMetricsPolicy, public s: LbStream, public c: CandidateSet, public keys: string[]) { super(); }
  onReply(ok: bool, reply: RespValue | null): void {
    const values = new Array<string>(this.keys.length).fill("");
    if (ok && reply !== null && !reply.isError()) {
      for (let i = 0; i < reply.items.length && i < values.length; i++) values[i] = reply.items[i].isNull() ? "" : reply.items[i].str;
    }
    this.policy.pickAfterPrefixRead(this.s, this.c, this.keys, values);
  }
}

/** Every host is saturated: is a request of this priority shed (else placed on the least bad)? */
function mustShed(priority: i32, mode: string): bool {
  if (priority == PRIORITY_HIGH || mode == "never") return false;
  return mode == "normal" || priority == PRIORITY_LOW;
}

export class EndpointMetricsPolicy extends Policy {
  readonly cache: MetricsCache;
  readonly picks: SharedPicks;
  private target: ScrapeTarget;
  private readonly keyOptions: KeyOptions;
  private readonly writes: PrefixWrites = new PrefixWrites();

  constructor(cfg: LbConfig, public runtime: MetricsRuntime) {
    super(cfg);
    const s = cfg.metrics;
    const cache = new MetricsCache(s);
    this.cache = cache;
    this.picks = new SharedPicks("", s.rateLimitScope == "gateway", s.windowSize, <f64>s.windowSeconds * 1000);
    const target = runtime.register(cache, cfg.usesRedis());
    if (cfg.staticHosts.length > 0) target.hosts = cfg.staticHosts;
    this.target = target;
    // The same keys as prefix_cache (its settings): both policies read and grow one tree.
    this.keyOptions = keyOptionsFrom(cfg.prefix);
  }

  decide(s: LbStream): Verdict {
    const c = s.root.candidatesFor(this.cfg);
    if (c.size == 0) return Verdict.Pass;
    this.target.hosts = c.hosts;
    this.runtime.inflight.remember(s.pool, c);
    const keys = this.prefixKeysOf(s);
    if (keys.length > 0) {
      const pool = s.pool!;
      if (pool.redis.command(["MGET"].concat(keys), new PrefixRead(this, s, c, keys), host.nowMillis())) return Verdict.Pending;
    }
    return this.pick(s, c, this.viewsOf(s, c), [], []);
  }

  /** The request's prefix level keys when the weighted prefix scorer is on; [] otherwise. */
  private prefixKeysOf(s: LbStream): string[] {
    const settings = this.cfg.metrics;
    const pool = s.pool;
    const body = s.body;
    if (settings.scoring != SCORING_WEIGHTED || settings.prefixWeight <= 0 || pool === null || body === null) return [];
    const json = body.json();
    if (json === null) return [];
    return prefixLevelKeys(json, this.keyOptions, pool.ns).keys;
  }

  /** Redis answered the prefix read (or failed: no prefix signal); runs on the root context. */
  pickAfterPrefixRead(s: LbStream, c: CandidateSet, keys: string[], values: string[]): void {
    if (!s.enterAsync()) return;
    const views = this.viewsOf(s, c);
    const scores = prefixScores(values, c.hosts);
    for (let i = 0; i < views.length; i++) views[i].prefixScore = scores[i];
    s.finishAsync(this.pick(s, c, views, keys, values));
  }

  private pick(s: LbStream, c: CandidateSet, views: HostView[], keys: string[], values: string[]): Verdict {
    const settings = this.cfg.metrics;
    const rng = s.root.rng;

    // 1. Saturation: keep the hosts with room; shed by priority when none has.
    const fraction = s.priority == PRIORITY_LOW ? this.cfg.lowPriorityFraction : 1.0;
    let pool = unsaturated(views, settings, fraction);
    if (pool.length == 0) {
      if (mustShed(s.priority, settings.shedWhenSaturated)) {
        s.shed("saturated");
        return Verdict.Rejected;
      }
      pool = allIndices(views.length);
    }
    const sub = new Array<HostView>(pool.length);
    for (let i = 0; i < pool.length; i++) sub[i] = views[pool[i]];

    // 2. Pick among them.
    let reason = "metrics";
    let survivors: i32[];
    if (!anyFresh(sub)) {
      reason = "inflight";
      survivors = lowestInflight(sub);
    } else if (settings.scoring == SCORING_WEIGHTED) {
      survivors = weightedScores(sub, adapterOf(s, views, settings.loraAdapters), settings).best;
    } else if (settings.metricPolicy == METRIC_POLICY_LEAST || settings.metricPolicy == METRIC_POLICY_MOST) {
      survivors = gaugeBand(sub, settings.metricPolicy == METRIC_POLICY_MOST);
      if (survivors.length == 0) { reason = "inflight"; survivors = lowestInflight(sub); }
    } else {
      survivors = filterTree(sub, adapterOf(s, views, settings.loraAdapters), s.priority == PRIORITY_LOW, settings);
      if (survivors.length == 0) {
        s.shed("no_capacity_for_sheddable");
        return Verdict.Rejected;
      }
    }
    // Among the survivors, the fewest in flight (metrics lag; in-flight counts do not), then random:
    // a random pick among hosts that all looked idle at the last scrape would herd onto them.
    const fewest = fewestInflight(sub, survivors);
    let chosen = sub[fewest[<i32>rng.nextBelow(<u32>fewest.length)]].address;

    // 3. rate_limit: a host over its share yields to a random other one (one under its share if any).
    const now = host.nowMillis();
    if (settings.rateLimit < 1.0) {
      // One window per candidate set: the same name in every VM of the gateway.
      this.picks.key = "llmlb.empicks|" + this.cfg.keyPrefix + "|" + c.fp;
      this.picks.refresh();
      if (this.picks.window.overLimit(chosen, settings.rateLimit, now)) {
        const other = this.otherHost(c, chosen, settings.rateLimit, now, rng.nextBelow(<u32>c.size));
        if (other.length > 0) { chosen = other; reason = "rate_limit"; }
      }
      this.picks.record(chosen, now);
    }
    this.runtime.inflight.notePick(s.pool, chosen, <f64>s.cost);
    if (keys.length > 0) this.recordPrefix(s, keys, values, chosen);
    return s.root.accounting.acquireHost(s, c, chosen, "endpoint_metrics:" + reason);
  }

  /** Points the request's prefix levels at the chosen host (unless they all do already). */
  private recordPrefix(s: LbStream, keys: string[], values: string[], chosen: string): void {
    let same = true;
    for (let i = 0; i < values.length; i++) if (values[i] != chosen) { same = false; break; }
    if (same) return;
    const pool = s.pool!;
    pool.redis.evalScript(PREFIX_WRITE_SCRIPT, keys, [chosen, this.cfg.prefix.keyTtlSeconds.toString()], this.writes, host.nowMillis());
  }

  private viewsOf(s: LbStream, c: CandidateSet): HostView[] {
    const now = host.nowMillis();
    const snapshot: HostSnapshot | null = this.cfg.metrics.source == SOURCE_POLL ? null : s.root.snapshot();
    const views = new Array<HostView>(c.size);
    for (let i = 0; i < c.size; i++) {
      const address = c.hosts[i];
      const v = new HostView(address);
      const report = this.cache.report(address, snapshot, now);
      if (report !== null) {
        v.metrics = report.metrics;
        v.gauge = report.gauge;
        v.fresh = this.cache.isFresh(report, now);
      }
      v.inflight = this.runtime.inflight.inflight(s.pool, address, s.root.accounting.local);
      v.latencyMs = this.runtime.latency.latencyMs(address);
      views[i] = v;
    }
    return views;
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

function lowestInflight(views: HostView[]): i32[] {
  return fewestInflight(views, allIndices(views.length));
}

/** The indices among `indices` whose host has the fewest requests in flight. */
function fewestInflight(views: HostView[], indices: i32[]): i32[] {
  let lo = Infinity;
  for (let i = 0; i < indices.length; i++) lo = min(lo, max(views[indices[i]].inflight, 0.0));
  const out = new Array<i32>();
  for (let i = 0; i < indices.length; i++) if (max(views[indices[i]].inflight, 0.0) == lo) out.push(indices[i]);
  return out;
}

/** metric_policy least / most: Higress's band on target_metric; hosts without the gauge are skipped. */
function gaugeBand(views: HostView[], most: bool): i32[] {
  const values = new Array<f64>(views.length);
  for (let i = 0; i < views.length; i++) values[i] = views[i].hasMetrics() ? views[i].gauge : NaN;
  const all = allIndices(views.length);
  return most ? highestBand(all, values) : lowestBand(all, values, false);
}
