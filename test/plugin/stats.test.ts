// The plugin's stats through the host facade (real Redis where Redis answers): each pick reason,
// pass-throughs, sheds by priority, Redis latency histogram and failures by kind, the breaker
// gauge, reclaimed leases, metrics age; read by Prometheus name and labels as Envoy exports them.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import net from "node:net";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { CLUSTER, acquireOk, glrConfig, host, hosts, postChat } from "./harness.js";
import { A, B, METRICS_CLUSTER, chat, makeHost, metricsConfig, vllmBody } from "../metrics-policy/harness.js";
import type { TestHost } from "../../host-test/facade/index.js";
import { isScriptQuery } from "../helpers/script-calls.js";
import { finish, start } from "./slo-streams.js";

let redis: RedisFixture;
let client: Redis;
let h: TestHost | null = null;

const suite = useRedisSuite();
beforeAll(() => { redis = suite.server; client = suite.redis; });
afterEach(async () => { h?.close(); h = null; await client.flushall(); });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}
const picks = (t: TestHost, policy: string, reason: string) => t.metric("llmlb_picks_total", { policy, reason });
const redisConfig = { serviceFQDN: "redis.static", servicePort: 6379, timeout: 500 };
const prefixConfig = (extra: Record<string, unknown> = {}) => ({ lb_policy: "prefix_cache", lb_config: { ...redisConfig, ...extra } });
const TURN1 = JSON.stringify({ model: "m", messages: [{ role: "system", content: "terse" }, { role: "user", content: "Name a prime." }] });
const TURN2 = JSON.stringify({ model: "m", messages: [{ role: "system", content: "terse" }, { role: "user", content: "Name a prime." },
  { role: "assistant", content: "7" }, { role: "user", content: "Another?" }] });

describe("picks by reason", () => {
  it("prefix_cache counts a miss, then a hit, each under its own labels; every known reason exists at 0", async () => {
    h = await host({ configuration: prefixConfig(), redis: { url: redis.url } });
    expect(picks(h, "prefix_cache", "prefix_spill")).toBe(0);
    expect(picks(h, "prefix_cache", "local_fallback")).toBe(0);
    const first = postChat(h, TURN1).s;
    await h.redisIdle();
    first.complete();
    expect(picks(h, "prefix_cache", "prefix_miss")).toBe(1);
    expect(picks(h, "prefix_cache", "prefix_hit")).toBe(0);
    const second = postChat(h, TURN2).s;
    await h.redisIdle();
    second.complete();
    expect(picks(h, "prefix_cache", "prefix_hit")).toBe(1);
    expect(h.plugin.metrics.prometheus()).toContain('llmlb_picks_total{policy="prefix_cache",reason="prefix_hit"} 1\n');
  });

  it("prefix_cache counts a spill when the prefix's host is at the load gate's cap", async () => {
    h = await host({ configuration: prefixConfig({ loadGateCap: 1 }), redis: { url: redis.url }, clusters: { [CLUSTER]: hosts(2) } });
    postChat(h, TURN1); // stays open: its host carries load 1
    await h.redisIdle();
    postChat(h, TURN2);
    await h.redisIdle();
    expect(picks(h, "prefix_cache", "prefix_miss")).toBe(1);
    expect(picks(h, "prefix_cache", "prefix_spill")).toBe(1);
    expect(picks(h, "prefix_cache", "prefix_hit")).toBe(0);
  });

  it("global_least_request counts least_request picks; header counts its picks and its pass-throughs", async () => {
    h = await host({ configuration: glrConfig(), redis: { url: redis.url } });
    const s = postChat(h).s;
    await h.redisIdle();
    s.complete();
    expect(picks(h, "global_least_request", "least_request")).toBe(1);
    h.close();
    h = await host({ configuration: { lb_policy: "header" } });
    postChat(h, undefined, { "x-llmlb-endpoint": "10.0.0.2:8000" }).s.complete();
    expect(picks(h, "header", "header")).toBe(1);
    postChat(h).s.complete(); // no header: the route's own load balancing
    expect(h.metric("llmlb_passthrough_total", { policy: "header" })).toBe(1);
  });

  it("endpoint_metrics counts its picks by reason without its policy prefix", async () => {
    h = await makeHost(metricsConfig(), [{ address: A, metrics: vllmBody(0) }, { address: B, metrics: vllmBody(3) }]);
    chat(h).complete();
    expect(picks(h, "endpoint_metrics", "metrics")).toBe(1);
    expect(picks(h, "endpoint_metrics", "inflight")).toBe(0);
  });

  it("predicted_latency counts its picks by the choice's name, not by the numbers its debug header shows", async () => {
    h = await host({ configuration: { lb_policy: "predicted_latency", lb_config: { ...redisConfig, sloExploration: 0, debugHeader: "x-llmlb-debug" } },
      redis: { url: redis.url }, clusters: { [CLUSTER]: hosts(2) } });
    const debug: string[] = [];
    for (let i = 0; i < 8; i++) {
      const { s } = postChat(h);
      await h.redisIdle();
      h.advance(20 + 15 * i); // a different TTFT each time: different predictions
      start(s);
      debug.push(String(s.response.headers["x-llmlb-debug"]));
      h.advance(10);
      finish(s);
      await h.redisIdle();
    }
    expect(new Set(debug.map((d) => /:ttft=[\d.]+/.exec(d)?.[0])).size).toBeGreaterThan(2);
    const series = [...h.plugin.metrics.prometheus().matchAll(/^llmlb_picks_total\{policy="predicted_latency",reason="([^"]*)"\} (\d+)$/gm)];
    expect(series.reduce((n, m) => n + Number(m[2]), 0)).toBe(8);
    for (const m of series) expect(m[1]).toMatch(/^[a-z_]+$/);
    expect(series.length).toBeLessThanOrEqual(3);
    expect(picks(h, "predicted_latency", "no_model")).toBe(1);
  });
});

describe("Redis trouble", () => {
  it("fallback picks, failures by kind and the breaker gauge follow Redis going down and coming back", async () => {
    h = await host({ configuration: glrConfig({ breakerFailures: 2, breakerOpenSeconds: 5 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const gauge = () => h!.metric("llmlb_redis_breakers_open", {});
    expect(gauge()).toBe(0);
    postChat(h);
    h.redisCalls[0].fail(); // NetworkError at once
    expect(gauge()).toBe(0);
    postChat(h);
    h.redisCalls[0].fail();
    expect(gauge()).toBe(1); // second consecutive failure opens it
    postChat(h); // breaker open: not even tried
    expect(picks(h, "global_least_request", "local_fallback")).toBe(3);
    expect(picks(h, "global_least_request", "least_request")).toBe(0);
    expect(h.metric("llmlb_redis_failures_total", { kind: "network" })).toBe(2);
    h.advance(5001); // ticks: a TIME probe goes out past the open breaker
    const probes = h.redisCalls.filter((c) => c.text.includes("TIME"));
    expect(probes.length).toBe(1);
    probes[0].reply("*2\r\n$10\r\n1795000000\r\n$6\r\n250000\r\n");
    expect(gauge()).toBe(0); // Redis answers again: the breaker closed
    postChat(h);
    h.redisCalls.filter((c) => isScriptQuery(c.text))[0].reply(acquireOk("10.0.0.1:8000"));
    expect(picks(h, "global_least_request", "least_request")).toBe(1);
  });

  it("with Redis down (nothing listens), picks fall back, network failures count and the breaker gauge flips", async () => {
    const port = await closedPort();
    h = await host({ configuration: glrConfig({ breakerFailures: 2, breakerOpenSeconds: 5 }), redis: { url: `redis://127.0.0.1:${port}` }, clusters: { [CLUSTER]: hosts(2) } });
    const streams = [];
    for (let i = 0; i < 3; i++) {
      const { s } = postChat(h);
      await h.redisIdle();
      streams.push(s);
    }
    expect(streams.every((s) => s.forwarded !== null)).toBe(true);
    expect(picks(h, "global_least_request", "local_fallback")).toBe(3);
    expect(h.metric("llmlb_redis_failures_total", { kind: "network" })).toBe(2); // the third was not tried
    expect(h.metric("llmlb_redis_breakers_open", {})).toBe(1);
  });

  it("a call that times out counts as a timeout", async () => {
    h = await host({ configuration: glrConfig({ timeout: 100, pickDeadlineMs: 1000 }), redis: "record" });
    postChat(h);
    h.advance(101);
    expect(h.metric("llmlb_redis_failures_total", { kind: "timeout" })).toBe(1);
    expect(h.metric("llmlb_redis_failures_total", { kind: "network" })).toBe(0);
    expect(picks(h, "global_least_request", "local_fallback")).toBe(1);
  });

  it("a Redis error reply counts as error_reply", async () => {
    h = await host({ configuration: glrConfig(), redis: "record" });
    postChat(h);
    h.redisCalls[0].reply("-ERR something broke\r\n");
    expect(h.metric("llmlb_redis_failures_total", { kind: "error_reply" })).toBe(1);
  });

  it("call latency lands in the histogram at the next stats flush, in ms", async () => {
    h = await host({ configuration: glrConfig({ pickDeadlineMs: 100 }), redis: "record" });
    postChat(h);
    h.advance(40);
    h.redisCalls[0].reply(acquireOk("10.0.0.1:8000"));
    expect(h.metric("llmlb_redis_call_duration_ms", {})).toEqual({ count: 0, sum: 0 }); // not flushed yet (as Envoy)
    h.flushStats();
    expect(h.metric("llmlb_redis_call_duration_ms", {})).toEqual({ count: 1, sum: 40.5 }); // circllhist bin [40, 41) midpoint
    const text = h.plugin.metrics.prometheus();
    expect(text).toContain('llmlb_redis_call_duration_ms_bucket{le="25"} 0\nllmlb_redis_call_duration_ms_bucket{le="50"} 1\n');
    expect(text).toContain("llmlb_redis_call_duration_ms_sum{} 40.5\nllmlb_redis_call_duration_ms_count{} 1\n");
  });
});

describe("shedding and leases", () => {
  it("sheds are counted by priority", async () => {
    h = await host({ configuration: glrConfig({ maxRequestCount: 2 }), redis: { url: redis.url }, clusters: { [CLUSTER]: hosts(1) } });
    postChat(h, undefined, { "x-llm-priority": "low" }); // low may use half: 1
    await h.redisIdle();
    postChat(h, undefined, { "x-llm-priority": "low" });
    await h.redisIdle();
    expect(h.metric("llmlb_shed_total", { priority: "low" })).toBe(1);
    postChat(h);
    await h.redisIdle();
    postChat(h);
    await h.redisIdle();
    expect(h.metric("llmlb_shed_total", { priority: "normal" })).toBe(1);
    expect(h.metric("llmlb_shed_total", { priority: "high" })).toBe(0);
  });

  it("leases a crashed gateway left behind are counted when the reconcile timer settles them", async () => {
    const crashed = await host({ configuration: glrConfig({ leaseTTL: 2 }), redis: { url: redis.url } });
    postChat(crashed);
    postChat(crashed);
    await crashed.redisIdle();
    crashed.close();
    h = await host({ configuration: glrConfig({ leaseTTL: 2 }), redis: { url: redis.url } });
    const own = postChat(h).s; // this gateway now knows the pool (the timer reconciles known pools)
    await h.redisIdle();
    own.complete();
    await h.redisIdle();
    await sleep(2300); // Redis's clock decides expiry: leaseTTL + the 250 ms expiry bucket
    // The two leases may sit in consecutive 250 ms expiry buckets, so they can be collected on
    // different ticks: each dead lease record counts once, when reconcile.lua removes it.
    for (let i = 0; i < 12 && (h.metric("llmlb_leases_reclaimed_total") as number) < 2; i++) {
      if (i > 0) await sleep(300);
      h.advance(1000);
      await h.redisIdle();
    }
    expect(h.metric("llmlb_leases_reclaimed_total")).toBe(2);
    for (let i = 0; i < 3; i++) { h.advance(1000); await h.redisIdle(); }
    expect(h.metric("llmlb_leases_reclaimed_total")).toBe(2); // counted once; the released lease never
  });
});

describe("metrics age", () => {
  it("grows while scrapes go unanswered and drops when one arrives", async () => {
    h = await makeHost(metricsConfig({ metricsSource: "poll", metricsCluster: METRICS_CLUSTER, scrapeIntervalMs: 1000 }), [{ address: A }, { address: B }]);
    const age = () => h!.metric("llmlb_metrics_age_ms", {}) as number;
    chat(h).complete();
    h.advance(1000);
    for (const c of [...h.httpCalls]) c.respond({ status: 200, body: vllmBody(0) });
    h.advance(1000);
    const fresh = age();
    expect(fresh).toBeLessThanOrEqual(1000);
    h.advance(3000); // scrapes go out, none answered
    expect(age()).toBe(fresh + 3000);
    for (const c of [...h.httpCalls]) c.respond({ status: 200, body: vllmBody(0) });
    h.advance(1000);
    expect(age()).toBeLessThanOrEqual(1000);
  });

  it("a worker VM that has seen no request does not overwrite the gauge", async () => {
    h = await makeHost(metricsConfig({ metricsSource: "poll", metricsCluster: METRICS_CLUSTER, scrapeIntervalMs: 1000 }), [{ address: A }], { workers: 2 });
    chat(h, { vm: 0 }).complete();
    h.advance(1000);
    for (const c of [...h.httpCalls]) c.respond({ status: 200, body: vllmBody(0) });
    h.advance(3000); // unanswered scrapes since
    expect(h.metric("llmlb_metrics_age_ms", {})).toBeGreaterThanOrEqual(2000);
  });
});
