// The root context (one per VM and plugin): configuration, Redis clients, pools, candidates,
// timers, and the dispatch of Redis replies (which arrive on the root context; higress-abi.md).
import { RootContext, Context } from "@solo-io/proxy-runtime/assembly/index";
import * as host from "../host/calls";
import { LbConfig, POLICY_GLOBAL_LEAST_REQUEST, POLICY_HEADER, POLICY_PREFIX_CACHE, POLICY_ENDPOINT_METRICS } from "../config/lb_config";
import { MatchInput, PluginConfig, parsePluginConfig } from "../config/rules";
import { RedisClient } from "../redis/client";
import { CandidateCache, CandidateSet, makeCandidateSet } from "../lb/candidates";
import { parseUpstreamHosts, HostSnapshot } from "../lb/upstream_hosts";
import { Pool } from "../lease/pool";
import { Accounting } from "../lease/accounting";
import { Policy } from "../policy/policy";
import { HeaderPolicy } from "../policy/header_policy";
import { LeastRequestPolicy } from "../policy/least_request";
import { EndpointMetricsPolicy } from "../policy/endpoint_metrics";
import { MetricsRuntime } from "../metrics_policy/runtime";
import { PrefixCachePolicy } from "../policy/prefix_cache";
import { Xorshift } from "../util/prng";
import { Stats } from "./stats";
import { randomSeed } from "../host/entropy";
import { LbStream } from "./stream";

const TICK_MS: u32 = 1000;

/** Root contexts by id, for proxy_on_redis_call_response (the SDK's map aborts on a miss). */
export const roots = new Map<u32, LbRoot>();

export class LbRoot extends RootContext {
  config: PluginConfig = new PluginConfig();
  stats: Stats;
  rng: Xorshift;
  accounting: Accounting;
  private clients: Map<string, RedisClient> = new Map();
  private pools: Map<string, Pool> = new Map();
  private policies: Map<usize, Policy> = new Map();
  private candidateCaches: Map<string, CandidateCache> = new Map();
  private staticSets: Map<usize, CandidateSet> = new Map();
  private lastSnapshot: HostSnapshot | null = null;
  /** endpoint_metrics' shared state (scraper, in-flight reads, latency); null when unused. */
  private metricsRuntime: MetricsRuntime | null = null;

  constructor(id: u32) {
    super(id);
    const rng = new Xorshift(randomSeed() ^ <u64>id);
    const stats = new Stats();
    this.rng = rng;
    this.stats = stats;
    // Lease ids must be unique across every gateway VM sharing Redis: a random per-VM tag.
    this.accounting = new Accounting(rng, stats, rng.next().toString(36));
    roots.set(id, this);
  }

  createContext(id: u32): Context {
    return new LbStream(id, this) as Context;
  }

  onConfigure(size: u32): bool {
    super.onConfigure(size);
    const parsed = parsePluginConfig(this.getConfiguration());
    const cfg = parsed.config;
    if (cfg === null) {
      this.stats.configRejectedOne();
      host.log(host.LogLevel.Critical, "invalid configuration: " + parsed.error);
      return false;
    }
    this.config = cfg;
    this.clients.clear();
    this.pools.clear();
    this.policies.clear();
    this.staticSets.clear();
    this.metricsRuntime = null;
    this.accounting.observer = null;
    let needTick = false;
    const all = cfg.all();
    for (let i = 0; i < all.length; i++) {
      const c = all[i];
      const p = this.makePolicy(c);
      if (p !== null) this.policies.set(changetype<usize>(c), p);
      if (c.usesRedis()) { this.clientFor(c); needTick = true; }
      if (c.staticHosts.length > 0) this.staticSets.set(changetype<usize>(c), makeCandidateSet(c.staticHosts));
    }
    let tickMs: i64 = needTick ? <i64>TICK_MS : 0;
    const mr = this.metricsRuntime;
    if (mr !== null && mr.tickPeriodMs() > 0) tickMs = tickMs == 0 ? mr.tickPeriodMs() : min(tickMs, mr.tickPeriodMs());
    if (tickMs > 0) host.setTickPeriod(<u32>tickMs);
    host.log(host.LogLevel.Info, "configured: " + all.length.toString() + " load-balancing config(s)");
    return true;
  }

  private makePolicy(c: LbConfig): Policy | null {
    if (c.policy == POLICY_GLOBAL_LEAST_REQUEST) return new LeastRequestPolicy(c);
    if (c.policy == POLICY_HEADER) return new HeaderPolicy(c);
    if (c.policy == POLICY_PREFIX_CACHE) return new PrefixCachePolicy(c);
    if (c.policy == POLICY_ENDPOINT_METRICS) {
      let mr = this.metricsRuntime;
      if (mr === null) { mr = new MetricsRuntime(this.accounting, c.metrics.latencyAlpha); this.metricsRuntime = mr; }
      return new EndpointMetricsPolicy(c, mr);
    }
    return null;
  }

  private clientFor(c: LbConfig): RedisClient | null {
    const r = c.redis;
    if (r === null) return null;
    const key = r.cluster + "\n" + r.username + "\n" + r.password + "\n" + r.timeoutMs.toString();
    if (this.clients.has(key)) return this.clients.get(key);
    const client = new RedisClient(r.cluster, r.username, r.password, r.timeoutMs, c.breakerFailures, <f64>c.breakerOpenMs);
    client.init(host.nowMillis());
    this.clients.set(key, client);
    return client;
  }

  select(route: string, authority: string, cluster: string): LbConfig | null {
    return this.config.select(new MatchInput(route, authority, cluster));
  }

  policyFor(c: LbConfig): Policy | null {
    const k = changetype<usize>(c);
    return this.policies.has(k) ? this.policies.get(k) : null;
  }

  poolFor(c: LbConfig, route: string, cluster: string): Pool | null {
    if (!c.usesRedis()) return null;
    const key = changetype<usize>(c).toString() + "\n" + route + "\n" + cluster;
    if (this.pools.has(key)) return this.pools.get(key);
    const client = this.clientFor(c);
    if (client === null) return null;
    const pool = new Pool(c, client, route, cluster);
    this.pools.set(key, pool);
    return pool;
  }

  /** The request's candidates: the static list, or the routed cluster's allowed hosts. */
  candidatesFor(c: LbConfig): CandidateSet {
    const k = changetype<usize>(c);
    if (this.staticSets.has(k)) return this.staticSets.get(k);
    const raw = host.getUpstreamHosts();
    if (raw === null) return new CandidateSet([], "");
    const snapshot = parseUpstreamHosts(raw);
    this.lastSnapshot = snapshot;
    const cacheKey = c.healthyStatuses.join(",");
    if (!this.candidateCaches.has(cacheKey)) this.candidateCaches.set(cacheKey, new CandidateCache());
    return this.candidateCaches.get(cacheKey).fromSnapshot(snapshot, c.healthyStatuses);
  }

  /** The snapshot read by the last candidatesFor() of this request (metrics live there). */
  snapshot(): HostSnapshot | null { return this.lastSnapshot; }

  onTick(): void {
    const now = host.nowMillis();
    const clients = this.clients.values();
    for (let i = 0; i < clients.length; i++) clients[i].sweep(now);
    const pools = this.pools.values();
    for (let i = 0; i < pools.length; i++) this.accounting.tick(pools[i], now);
    const mr = this.metricsRuntime;
    if (mr !== null) mr.onTick(now);
  }

  /** proxy_http_call answers (endpoint_metrics' scrapes); unknown tokens go to the SDK's handler. */
  onHttpCallResponse(token: u32, headers: u32, bodySize: u32, trailers: u32): void {
    const mr = this.metricsRuntime;
    if (mr !== null && mr.onHttpCallResponse(token, bodySize, host.nowMillis())) return;
    super.onHttpCallResponse(token, headers, bodySize, trailers);
  }

  /** Upstream response headers arrived for a request this plugin placed on `address`. */
  onFirstByte(address: string, ms: f64): void {
    const mr = this.metricsRuntime;
    if (mr !== null) mr.latency.observeFirstByte(address, ms);
  }

  onRedisResponse(token: u32, status: u32, size: u32): void {
    const now = host.nowMillis();
    const clients = this.clients.values();
    for (let i = 0; i < clients.length; i++) {
      if (clients[i].onResponse(token, status, size, now)) return;
    }
  }
}

