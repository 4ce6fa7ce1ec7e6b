// What one root context (VM + plugin) holds for its streams: the parsed configuration, the policy
// of each rule (built by policy/registry.ts), Redis clients and accounting pools, the shared
// services and the plugin's metrics. The root context owns one; each stream reads it.
import * as host from "../host/calls";
import { LbConfig } from "../config/lb_config";
import { MatchInput, PluginConfig } from "../config/rules";
import { RedisClient } from "../redis/client";
import { Pool } from "../services/lease/pool";
import { Accounting } from "../services/lease/accounting";
import { Services } from "../services/services";
import { Stats } from "../services/stats";
import { Policy } from "../policy/policy";
import { makePolicy } from "../policy/registry";
import { Xorshift } from "../util/prng";
import { syncClockOffset } from "../host/shared_clock";

// 500 ms: the healer and the Redis probe run every tick, so a dead gateway's leases leave within
// leaseTTL + 250 ms (bucket) + 500 ms, and routing through Redis resumes within 500 ms of its return.
const TICK_MS: u32 = 500;
/** The tick while predicted_latency holds requests (sloHoldMs) and no pick deadline is shorter. */
const HOLD_TICK_MS: i64 = 10;

export class Plugin {
  config: PluginConfig = new PluginConfig();
  stats: Stats;
  /** What policies use besides their request (accounting, candidates, rng, metrics runtime). */
  services: Services;
  private clients: Map<string, RedisClient> = new Map();
  private pools: Map<string, Pool> = new Map();
  private policies: Map<usize, Policy> = new Map();
  /** The tick period configured (background work), the short one while picks wait, the one set. */
  private baseTickMs: i64 = 0;
  private fastTickMs: i64 = 0;
  private tickMs: i64 = 0;
  private lastFullTickMs: f64 = -1e18;
  /** When the host last armed the tick timer (a period change or a tick). */
  private armedAtMs: f64 = 0;

  constructor(rng: Xorshift) {
    const stats = new Stats();
    this.stats = stats;
    // Lease ids must be unique across every gateway VM sharing Redis: a random per-VM tag.
    this.services = new Services(rng, stats, new Accounting(rng, stats, rng.next().toString(36)));
  }

  /** Adopts a parsed configuration: builds each rule's policy and Redis client; returns the tick period (ms, 0: none). */
  configure(cfg: PluginConfig): i64 {
    syncClockOffset(); // a VM started after a wall-clock step back runs the others' clock
    this.config = cfg;
    const old = this.clients.values();
    for (let i = 0; i < old.length; i++) old[i].retire();
    this.retirePolicies();
    this.clients.clear();
    this.pools.clear();
    this.policies.clear();
    this.services.reset();
    let needTick = false;
    let fastMs: i64 = 0;
    let queuePollMs: i64 = 0;
    const all = cfg.all();
    for (let i = 0; i < all.length; i++) {
      const c = all[i];
      const p = makePolicy(c, this.services);
      if (p !== null) { this.policies.set(changetype<usize>(c), p); this.stats.definePolicy(c.policy); }
      if (c.usesRedis()) {
        this.clientFor(c);
        needTick = true;
        // A fifth of the wait (the deadline, never past the Redis timeout: Pool.pickWaitMs): an
        // expired pick is noticed within wait + wait / 5.
        const wait = c.redis !== null ? min<i64>(c.pickDeadlineMs, <i64>c.redis!.timeoutMs) : c.pickDeadlineMs;
        const t = max<i64>(1, wait / 5);
        fastMs = fastMs == 0 ? t : min(fastMs, t);
      }
      // Held requests (predicted_latency's sloHoldMs) are re-evaluated on the short tick.
      if (c.slo.holdMs > 0) { needTick = true; fastMs = fastMs == 0 ? HOLD_TICK_MS : min(fastMs, HOLD_TICK_MS); }
      if (c.usesRedis() && c.queue.capacity > 0) queuePollMs = queuePollMs == 0 ? c.queue.pollMs : min(queuePollMs, c.queue.pollMs);
      this.services.candidates.addStatic(c);
    }
    let tickMs: i64 = needTick ? <i64>TICK_MS : 0;
    const mr = this.services.metricsRuntimeIfAny();
    if (mr !== null && mr.tickPeriodMs() > 0) tickMs = tickMs == 0 ? mr.tickPeriodMs() : min(tickMs, mr.tickPeriodMs());
    if (queuePollMs > 0) tickMs = min(tickMs, queuePollMs);
    this.baseTickMs = tickMs;
    this.fastTickMs = fastMs > 0 && tickMs > 0 ? min(fastMs, tickMs) : tickMs;
    this.tickMs = tickMs;
    // The period starts now: the first full tick is due one period after the configuration.
    this.armedAtMs = host.nowMillis();
    this.lastFullTickMs = this.armedAtMs;
    return tickMs;
  }

  private clientFor(c: LbConfig): RedisClient | null {
    const r = c.redis;
    if (r === null) return null;
    const key = r.cluster + "\n" + r.username + "\n" + r.password + "\n" + r.timeoutMs.toString();
    if (this.clients.has(key)) return this.clients.get(key);
    const client = new RedisClient(r.cluster, r.username, r.password, r.timeoutMs, c.breakerFailures, <f64>c.breakerOpenMs);
    client.observer = this.stats;
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

  poolFor(c: LbConfig, route: string, routedCluster: string): Pool | null {
    if (!c.usesRedis()) return null;
    const cluster = c.poolCluster.length > 0 ? c.poolCluster : routedCluster;
    const key = changetype<usize>(c).toString() + "\n" + route + "\n" + cluster;
    if (this.pools.has(key)) return this.pools.get(key);
    const client = this.clientFor(c);
    if (client === null) return null;
    const pool = new Pool(c, client, route, cluster);
    this.pools.set(key, pool);
    return pool;
  }

  /**
   * Proxy-Wasm has no per-stream timer: while a pick waits for Redis the root tick runs at the
   * pick deadline's period, and at the configured period otherwise. Envoy's Wasm::setTickPeriod
   * (source/extensions/common/wasm/wasm.cc; host-test/abi/root-context.ts does the same) disables
   * the running timer and arms a new one at each change, so switching back to the long period
   * after every reply would push the next tick away each time: with a request every 100 ms a
   * 500 ms tick would never fire (no renewal, healer or probe). Outside the tick the timer is
   * re-armed only when it would fire later than wanted (a pick now waits), and the tick sets the
   * period that brings the next one when it is due: the short period while picks wait, else what
   * is left until the next full tick. Called after every entry that may send or settle a pick (a
   * held stream, a Redis reply) and by the tick itself.
   */
  adjustTick(now: f64, fromTick: bool = false): void {
    if (this.baseTickMs == 0) return;
    // After a tick the host re-arms the timer one period on (Envoy's tickHandler).
    if (fromTick) this.armedAtMs = now;
    let waiting = this.services.heldStreams > 0;
    const clients = this.clients.values();
    for (let i = 0; i < clients.length && !waiting; i++) waiting = clients[i].waiting > 0;
    const dueIn: f64 = waiting ? <f64>this.fastTickMs : Math.max(1, this.lastFullTickMs + <f64>this.baseTickMs - now);
    if (!fromTick && this.armedAtMs + <f64>this.tickMs <= now + dueIn + 1) return; // fires in time
    const want = <i64>Math.ceil(dueIn);
    if (want == this.tickMs) return; // from the tick: the host re-armed it at this period already
    this.tickMs = want;
    this.armedAtMs = now;
    host.setTickPeriod(<u32>want);
  }

  tick(now: f64): void {
    const clients = this.clients.values();
    for (let i = 0; i < clients.length; i++) clients[i].expireWaits(now);
    // Short ticks (picks waiting) only expire deadlines; the rest runs at the configured period.
    const full = now - this.lastFullTickMs >= <f64>this.baseTickMs * 0.9;
    if (this.services.heldStreams > 0 || full) {
      const policies = this.policies.values();
      for (let i = 0; i < policies.length; i++) policies[i].onTick(now);
    }
    if (full) {
      this.lastFullTickMs = now;
      this.fullTick(now);
    }
    this.adjustTick(now, true);
  }

  private fullTick(now: f64): void {
    syncClockOffset();
    const clients = this.clients.values();
    for (let i = 0; i < clients.length; i++) clients[i].sweep(now);
    const pools = this.pools.values();
    for (let i = 0; i < pools.length; i++) this.services.accounting.tick(pools[i], now);
    const mr = this.services.metricsRuntimeIfAny();
    if (mr !== null) mr.onTick(now);
    this.services.queue.tick(now);
  }

  /** The policies are replaced (a new configuration) or their root context is deleted (its
   *  streams ended): each lets go of what it holds, and of its state that outlives it elsewhere
   *  (its gauges). */
  retirePolicies(): void {
    const policies = this.policies.values();
    for (let i = 0; i < policies.length; i++) policies[i].retire();
  }

  /** proxy_on_queue_ready: a sibling VM woke a policy (predicted_latency's worker wake). */
  onQueueReady(token: u32, now: f64): void {
    const policies = this.policies.values();
    // One wake queue per VM (worker_wake.ts): every policy it belongs to runs its pass.
    for (let i = 0; i < policies.length; i++) policies[i].onQueueReady(token, now);
    this.adjustTick(now);
  }

  /** An http-call answer for endpoint_metrics' scraper; false when the token is not ours. */
  onHttpCallResponse(token: u32, bodySize: u32, now: f64): bool {
    const mr = this.services.metricsRuntimeIfAny();
    return mr !== null && mr.onHttpCallResponse(token, bodySize, now);
  }

  /** Upstream response headers arrived for a request this plugin placed on `address`. */
  onFirstByte(address: string, ms: f64): void {
    const mr = this.services.metricsRuntimeIfAny();
    if (mr !== null) mr.latency.observeFirstByte(address, ms);
  }

  onRedisResponse(token: u32, status: u32, size: u32): void {
    const now = host.nowMillis();
    const clients = this.clients.values();
    for (let i = 0; i < clients.length; i++) {
      if (clients[i].onResponse(token, status, size, now)) break;
    }
    this.adjustTick(now);
  }
}
