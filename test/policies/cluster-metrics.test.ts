// cluster_metrics through the host facade (release .wasm): each request's service is written into
// the cluster header at request headers; LeastBusy spreads open requests; LeastFirstTokenLatency
// follows the first response chunk; AdaptiveScore avoids a failing service during its cooldown but
// not after a client error or a client abort; with global_inflight_enabled the counts are leases
// in Redis shared by two VMs, released when the streams end; Redis failing or slower than
// pickDeadlineMs -> the local pick.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { TestHost } from "../../host-test/facade/index.js";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { REDIS_CLUSTER, WASM } from "../plugin/harness.js";

const A = "outbound|80||svc-a.static";
const B = "outbound|80||svc-b.static";
const C = "outbound|80||svc-c.static";
const TARGET = "x-higress-target-cluster";
let h: TestHost | null = null;
let redis: RedisFixture;
let client: Redis;
const suite = useRedisSuite();
beforeAll(() => { redis = suite.server; client = suite.redis; });
afterEach(async () => { h?.close(); h = null; await client.flushall(); });

async function cmHost(lbConfig: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<TestHost> {
  return TestHost.create({
    wasm: WASM, logLevel: "debug",
    configuration: { lb_type: "cluster", lb_policy: "cluster_metrics", lb_config: { service_list: [A, B, C], ...lbConfig } },
    // The facade forwards to the stream's routed cluster (the gateway test routes by the header).
    clusters: { [A]: [{ address: "10.0.1.1:80" }] },
    redisClusters: [REDIS_CLUSTER],
    ...extra,
  });
}

function open(host: TestHost, vm = 0) {
  const s = host.stream({ route: "llm", cluster: A, method: "POST", vm, headers: { "content-type": "application/json" } });
  const action = s.sendRequestHeaders(false);
  return { s, action };
}

function finish(s: ReturnType<typeof open>["s"], status: string): void {
  s.sendResponseHeaders({ ":status": status }, false);
  s.sendResponseBody("data: x\n\n", true);
  s.complete();
}

const count = (services: string[]) => services.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<string, number>());

describe("cluster_metrics", () => {
  it("LeastBusy: decided at request headers, open requests spread evenly, a drained service is refilled", async () => {
    h = await cmHost({ mode: "LeastBusy" });
    const opened = Array.from({ length: 9 }, () => open(h!));
    expect(opened.every((o) => o.action === 0)).toBe(true);
    const picked = opened.map((o) => o.s.requestHeaders[TARGET]);
    expect([...count(picked).entries()].sort()).toEqual([[A, 3], [B, 3], [C, 3]]);
    for (const o of opened.filter((x) => x.s.requestHeaders[TARGET] === A)) finish(o.s, "200");
    const next = Array.from({ length: 3 }, () => open(h!).s.requestHeaders[TARGET]);
    expect(next).toEqual([A, A, A]);
  });

  it("LeastFirstTokenLatency: the service whose first chunk came soonest wins", async () => {
    h = await cmHost({ mode: "LeastFirstTokenLatency" });
    const delays = new Map([[A, 50], [B, 10], [C, 30]]);
    // Unsampled services tie (mean 0): open requests until each service has one; drop the extras
    // (a client abort leaves no sample).
    const first = new Map<string, ReturnType<typeof open>["s"]>();
    while (first.size < 3) {
      const o = open(h);
      const svc = o.s.requestHeaders[TARGET];
      if (first.has(svc)) o.s.abort(); else first.set(svc, o.s);
    }
    let now = 0;
    for (const [svc, s] of [...first.entries()].sort((x, y) => delays.get(x[0])! - delays.get(y[0])!)) {
      h.advance(delays.get(svc)! - now);
      now = delays.get(svc)!;
      s.sendResponseHeaders({ ":status": "200" }, false);
      s.sendResponseBody("data: first\n\n", false);
    }
    for (const s of first.values()) { s.sendResponseBody("", true); s.complete(); }
    for (let i = 0; i < 5; i++) expect(open(h).s.requestHeaders[TARGET]).toBe(B);
  });

  it("AdaptiveScore: a 503 cools the service down; a 400 or a client abort does not", async () => {
    h = await cmHost({ mode: "AdaptiveScore", p2c_choices: 3, failure_cooldown_ms: 30000 });
    for (const [ending, cools] of [["503", true], ["400", false], ["abort", false]] as const) {
      await client.flushall();
      h.close();
      h = await cmHost({ mode: "AdaptiveScore", p2c_choices: 3, failure_cooldown_ms: 30000 });
      let o = open(h);
      while (o.s.requestHeaders[TARGET] !== A) { finish(o.s, "200"); o = open(h); }
      if (ending === "abort") o.s.abort(); else finish(o.s, ending);
      const picks = Array.from({ length: 30 }, () => open(h!).s.requestHeaders[TARGET]);
      expect(picks.includes(A)).toBe(!cools);
    }
  });

  it("AdaptiveScore: after the cooldown the failed service is eligible again", async () => {
    h = await cmHost({ mode: "AdaptiveScore", p2c_choices: 3, failure_cooldown_ms: 1000, error_penalty: 0 });
    let o = open(h);
    while (o.s.requestHeaders[TARGET] !== A) { finish(o.s, "200"); o = open(h); }
    finish(o.s, "503");
    for (let i = 0; i < 10; i++) expect(open(h).s.requestHeaders[TARGET]).not.toBe(A);
    h.advance(1001);
    const picks = Array.from({ length: 30 }, () => open(h!).s.requestHeaders[TARGET]);
    expect(picks.includes(A)).toBe(true);
  });

  it("global in-flight: leases in Redis shared by two VMs, released when the streams end", async () => {
    h = await cmHost({ mode: "AdaptiveScore", service_list: [A, B], global_inflight_enabled: true, serviceFQDN: "redis.static", servicePort: 6379, global_inflight_timeout: 1000 },
      { redis: { url: redis.url }, workers: 2 });
    const streams = [];
    for (let i = 0; i < 4; i++) {
      const o = open(h, i % 2);
      expect(o.action).toBe(1); // held until Redis answers
      await h.redisIdle();
      expect([A, B]).toContain(o.s.requestHeaders[TARGET]);
      expect(o.s.forwarded).not.toBeNull();
      streams.push(o.s);
    }
    const picked = count(streams.map((s) => s.requestHeaders[TARGET]));
    expect([...picked.values()]).toEqual([2, 2]);
    const key = "{higress:adaptive_score_inflight:llm:AdaptiveScore}:load";
    const loads = await client.zrange(key, 0, -1, "WITHSCORES");
    expect(loads.filter((_, i) => i % 2 === 1).map(Number)).toEqual([2, 2]);
    for (const s of streams) finish(s, "200");
    await h.redisIdle();
    const after = await client.zrange(key, 0, -1, "WITHSCORES");
    expect(after.filter((_, i) => i % 2 === 1).map(Number)).toEqual([0, 0]);
  });

  it("global in-flight with Redis failing: the local AdaptiveScore pick, no hang", async () => {
    h = await cmHost({ mode: "AdaptiveScore", service_list: [A, B], global_inflight_enabled: true, serviceFQDN: "redis.static", servicePort: 6379 },
      { redis: "record" });
    const o = open(h);
    expect(o.action).toBe(1);
    for (const call of [...h.redisCalls]) call.fail();
    expect([A, B]).toContain(o.s.requestHeaders[TARGET]);
    expect(o.s.forwarded).not.toBeNull();
  });

  it("global in-flight: a pick Redis does not answer goes on locally after pickDeadlineMs (50 ms unless set)", async () => {
    for (const [deadline, before, after] of [[undefined, 40, 70], [400, 390, 490]] as const) {
      h?.close();
      h = await cmHost({ mode: "AdaptiveScore", service_list: [A, B], global_inflight_enabled: true, serviceFQDN: "redis.static", servicePort: 6379,
        ...(deadline === undefined ? {} : { pickDeadlineMs: deadline }) }, { redis: "record" });
      expect(h.configured[0]).toBe(true);
      const o = open(h);
      expect(o.action).toBe(1);
      h.advance(before);
      expect(o.s.forwarded, `deadline ${deadline}`).toBeNull(); // still waiting for Redis
      h.advance(after - before);
      expect(o.s.forwarded, `deadline ${deadline}`).not.toBeNull();
      expect([A, B]).toContain(o.s.requestHeaders[TARGET]);
    }
  });

  it("refuses a pickDeadlineMs out of range, naming the key; cluster_hash has no such key", async () => {
    h = await cmHost({ pickDeadlineMs: 0 });
    expect(h.configured[0]).toBe(false);
    expect(h.logMessages().join("\n")).toContain("lb_config.pickDeadlineMs");
    h.close();
    h = await TestHost.create({ wasm: WASM, logLevel: "debug", clusters: { [A]: [{ address: "10.0.1.1:80" }] },
      configuration: { lb_type: "cluster", lb_policy: "cluster_hash", lb_config: { clusters: [{ name: A, weight: 1 }], pickDeadlineMs: 100 } } });
    expect(h.configured[0]).toBe(false);
    expect(h.logMessages().join("\n")).toContain("pickDeadlineMs");
  });

  it("refuses a misspelt mode, naming the key", async () => {
    h = await cmHost({ mode: "leastBusy" });
    expect(h.configured[0]).toBe(false);
    expect(h.logMessages().join("\n")).toContain("lb_config.mode must be one of LeastBusy, LeastTotalLatency, LeastFirstTokenLatency, AdaptiveScore");
  });
});
