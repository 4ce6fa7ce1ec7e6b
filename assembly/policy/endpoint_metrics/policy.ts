// endpoint_metrics (old names least_busy, metrics_based): picks a host from the model servers'
// own load signals (vLLM / SGLang /metrics), corrected by the requests sent since the metrics
// were taken. A composition, each step in its own file (README.md):
//   views (views.ts) -> saturation filter (saturation.ts, shed by priority) -> pick among the rest:
//   filter tree (filter_tree.ts), least / most band (pickers.ts), or weighted scorers in [0, 1]
//   (weighted.ts, with the prefix term of prefix_io.ts) -> fewest in flight, random tie-break
//   (pickers.ts) -> rate_limit (rate_limit.ts) -> a lease on the chosen host (Accounting).
// Inputs: candidates, body (model = LoRA adapter, prefix), priority, cost, pool.
// Config: metrics settings (config/metrics_settings.ts), prefix settings for the prefix term.
// Failure behaviour: no candidates -> Pass; no fresh metrics -> least in flight; Redis down ->
// local lease on the chosen host; all saturated -> shed (429) or least bad, by priority.
import { Policy } from "../policy";
import { Verdict } from "../../services/request/verdict";
import { LbRequest, PRIORITY_LOW } from "../../services/request/request";
import { Services } from "../../services/services";
import { LbConfig } from "../../config/lb_config";
import { METRIC_POLICY_LEAST, METRIC_POLICY_MOST, SCORING_WEIGHTED, SHED_NEVER } from "../../config/metrics_settings";
import { CandidateSet } from "../../services/candidates/candidates";
import { HostView } from "../../services/metrics_view/host_view";
import { MetricsCache } from "../../services/metrics_view/metrics_cache";
import { MetricsRuntime, ScrapeTarget } from "../../services/metrics_view/runtime";
import * as host from "../../host/calls";
import { RedisReplyHandler } from "../../redis/client";
import { RespValue } from "../../redis/resp";
import { KeyOptions, keyOptionsFrom } from "../../prefix/keys";
import { filterTree } from "./filter_tree";
import { allIndices } from "./bands";
import { weightedScores } from "./weighted";
import { anyFresh, unsaturated } from "./saturation";
import { adapterOf } from "./adapter";
import { prefixScores } from "./prefix_signal";
import { PrefixWrites, mgetValues, prefixKeysOf, recordPrefix } from "./prefix_io";
import { fewestInflight, gaugeBand, lowestInflight, mustShed } from "./pickers";
import { RateLimit } from "./rate_limit";
import { hostViews } from "./views";

/** The MGET of a request's prefix levels; the pick resumes when it answers, or at the pick
 *  deadline without the prefix signal (a reply after that is ignored). */
class PrefixRead extends RedisReplyHandler {
  private answered: bool = false;
  constructor(public policy: EndpointMetricsPolicy, public r: LbRequest, public c: CandidateSet, public keys: string[]) { super(); }
  onReply(ok: bool, reply: RespValue | null): void {
    if (this.answered) return;
    this.answered = true;
    this.policy.pickAfterPrefixRead(this.r, this.c, this.keys, mgetValues(ok, reply, this.keys.length));
  }
}

export class EndpointMetricsPolicy extends Policy {
  readonly cache: MetricsCache;
  readonly rateLimit: RateLimit;
  readonly runtime: MetricsRuntime;
  private target: ScrapeTarget;
  private readonly keyOptions: KeyOptions;
  private readonly writes: PrefixWrites = new PrefixWrites();

  constructor(cfg: LbConfig, services: Services) {
    super(cfg, services);
    const s = cfg.metrics;
    const runtime = services.metricsRuntime(s.latencyAlpha);
    this.runtime = runtime;
    const cache = new MetricsCache(s);
    this.cache = cache;
    this.rateLimit = new RateLimit(cfg);
    const target = runtime.register(cache, cfg.usesRedis());
    if (cfg.staticHosts.length > 0) target.hosts = cfg.staticHosts;
    this.target = target;
    // The same keys as prefix_cache (its settings): both policies read and grow one tree.
    this.keyOptions = keyOptionsFrom(cfg.prefix);
  }

  decide(r: LbRequest): Verdict {
    const c = r.candidates();
    if (c.size == 0) return Verdict.Pass;
    this.target.hosts = c.hosts;
    this.runtime.inflight.remember(r.pool, c);
    const keys = prefixKeysOf(this.cfg, r, this.keyOptions);
    if (keys.length > 0) {
      const pool = r.pool!;
      if (pool.redis.command(["MGET"].concat(keys), new PrefixRead(this, r, c, keys), host.nowMillis(), pool.pickWaitMs())) return Verdict.Pending;
    }
    return this.pick(r, c, this.viewsOf(r, c), [], []);
  }

  /** Redis answered the prefix read (or failed: no prefix signal); runs on the root context. */
  pickAfterPrefixRead(r: LbRequest, c: CandidateSet, keys: string[], values: string[]): void {
    if (!r.port.enterAsync()) return;
    const views = this.viewsOf(r, c);
    const scores = prefixScores(values, c);
    for (let i = 0; i < views.length; i++) views[i].prefixScore = scores[i];
    r.port.finishAsync(this.pick(r, c, views, keys, values));
  }

  private viewsOf(r: LbRequest, c: CandidateSet): HostView[] {
    return hostViews(this.cfg, r, c, this.cache, this.runtime, this.services);
  }

  private pick(r: LbRequest, c: CandidateSet, views: HostView[], keys: string[], values: string[]): Verdict {
    const settings = this.cfg.metrics;
    const rng = this.services.rng;

    // 1. Saturation: keep the hosts with room; shed by priority when none has.
    const fraction = r.priority == PRIORITY_LOW ? this.cfg.lowPriorityFraction : 1.0;
    let pool = unsaturated(views, settings, fraction);
    if (pool.length == 0) {
      if (mustShed(r.priority, settings.shedWhenSaturated)) {
        r.port.shed("saturated");
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
      survivors = weightedScores(sub, adapterOf(r, views, settings.loraAdapters), settings).best;
      // No best (every total NaN: engines reporting NaN): as a gauge band without values.
      if (survivors.length == 0) { reason = "inflight"; survivors = lowestInflight(sub); }
    } else if (settings.metricPolicy == METRIC_POLICY_LEAST || settings.metricPolicy == METRIC_POLICY_MOST) {
      survivors = gaugeBand(sub, settings.metricPolicy == METRIC_POLICY_MOST);
      if (survivors.length == 0) { reason = "inflight"; survivors = lowestInflight(sub); }
    } else {
      const adapter = adapterOf(r, views, settings.loraAdapters);
      survivors = filterTree(sub, adapter, r.priority == PRIORITY_LOW, settings);
      // No host within queueThreshold / kvThreshold for a low-priority request: shed, unless
      // shedWhenSaturated is never, which places it as a normal one (that tree keeps a host).
      if (survivors.length == 0 && settings.shedWhenSaturated == SHED_NEVER) survivors = filterTree(sub, adapter, false, settings);
      if (survivors.length == 0) {
        r.port.shed("no_capacity_for_sheddable");
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
      const other = this.rateLimit.redirect(c, chosen, now, rng);
      if (other.length > 0) { chosen = other; reason = "rate_limit"; }
    }
    this.runtime.notePick(r, chosen);
    if (keys.length > 0) recordPrefix(this.cfg, r, keys, values, chosen, this.writes);
    return this.services.accounting.acquireHost(r, c, chosen, "endpoint_metrics:" + reason);
  }

  onStreamDone(r: LbRequest): void {
    this.runtime.ended(r);
  }
}
