// global_least_request through the host facade with a real Redis: atomic shared picks, release on
// every ending, leases that heal (the healer, given-up acquires), shedding with priorities,
// fail-fast penalties, Redis outages and the recovery probe, Higress's counter in compat mode.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { CLUSTER, advanceWithIo, glrConfig, host, hosts, poolLoads, postChat } from "./harness.js";
import type { TestHost } from "../../host-test/facade/index.js";
import { Pool, hostList } from "../lua/pool.js";
import { isScriptQuery } from "../helpers/script-calls.js";

const NS = `{llmlb:llm:${CLUSTER}}`;
let redis: RedisFixture;
let client: Redis;
let h: TestHost | null = null;

const suite = useRedisSuite();
beforeAll(() => { redis = suite.server; client = suite.redis; });
afterEach(async () => { h?.close(); h = null; await client.flushall(); });

const loads = () => poolLoads(client, NS);
const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("picking", () => {
  it("spreads concurrent requests from two VMs evenly, each through one atomic Redis call", async () => {
    h = await host({ configuration: glrConfig(), redis: { url: redis.url }, workers: 2 });
    const streams = [];
    for (let i = 0; i < 12; i++) {
      const r = postChat(h, undefined, {}, i % 2);
      expect(r.headerAction).toBe(1); // StopIteration: headers held for the body
      expect(r.bodyAction).toBe(2); // StopIterationAndWatermark while Redis answers (never Buffer: no 413)
      await h.redisIdle();
      streams.push(r.s);
    }
    const picked = streams.map((s) => s.forwarded!.upstream);
    expect(picked.every((u) => u.via === "override")).toBe(true);
    const perHost = new Map<string, number>();
    for (const u of picked) perHost.set(u.address!, (perHost.get(u.address!) ?? 0) + 1);
    expect([...perHost.values()].sort()).toEqual([3, 3, 3, 3]);
    expect(await loads()).toEqual({ "10.0.0.1:8000": 3, "10.0.0.2:8000": 3, "10.0.0.3:8000": 3, "10.0.0.4:8000": 3 });
    for (const s of streams) { s.sendResponseHeaders({ ":status": "200" }, true); s.complete(); }
    await h.redisIdle();
    expect(sum(await loads())).toBe(0);
    expect(await client.hlen(`${NS}:lease`)).toBe(0);
  });

  it("never picks an unhealthy host", async () => {
    h = await host({ configuration: glrConfig(), redis: { url: redis.url }, clusters: { [CLUSTER]: [...hosts(2), { address: "10.0.0.9:8000", health: "Unhealthy" }] } });
    for (let i = 0; i < 6; i++) {
      const { s } = postChat(h);
      await h.redisIdle();
      expect(s.forwarded!.upstream.address).not.toBe("10.0.0.9:8000");
    }
  });

  it("bodiless requests pass through at once, without Redis (no hang: Higress #3740)", async () => {
    h = await host({ configuration: glrConfig(), redis: { url: redis.url } });
    const s = h.stream({ method: "GET", path: "/v1/models", cluster: CLUSTER, route: "llm" });
    expect(s.sendRequestHeaders(true)).toBe(0);
    expect(s.forwarded).not.toBeNull();
    expect(s.overrideHost.requested).toBeNull();
    expect(h.redisHistory.filter((c) => isScriptQuery(c.text)).length).toBe(0);
  });

  it("re-sends the script when Redis lost it (FCALL of a missing library -> EVALSHA -> NOSCRIPT -> EVAL)", async () => {
    h = await host({ configuration: glrConfig(), redis: { url: redis.url } });
    await client.function("FLUSH");
    await client.script("FLUSH");
    await client.config("RESETSTAT");
    const { s } = postChat(h);
    await h.redisIdle();
    expect(s.forwarded!.upstream.via).toBe("override");
    const stats = await client.info("commandstats");
    expect(stats).toMatch(/cmdstat_fcall:calls=1,.*failed_calls=1/);
    expect(stats).toMatch(/cmdstat_evalsha:calls=1,/);
    expect(stats).toMatch(/cmdstat_eval:calls=1,/);
  });

  it("writes the destination header only after clear_route_cache=off (no route re-match: Higress #4615)", async () => {
    h = await host({ configuration: glrConfig({ destinationHeader: "x-gateway-destination-endpoint", debugHeader: "x-llmlb-debug" }), redis: { url: redis.url } });
    const { s } = postChat(h);
    await h.redisIdle();
    const chosen = s.forwarded!.upstream.address!;
    expect(s.forwarded!.headers["x-gateway-destination-endpoint"]).toBe(chosen);
    expect(s.properties["clear_route_cache"]).toBe("off");
    expect(s.routeRecomputed).toBe(0);
    s.sendResponseHeaders({ ":status": "200" }, true);
    expect(s.response.headers["x-llmlb-debug"]).toBe(`host=${chosen};reason=least_request;load=0`);
  });
});

describe("release on every ending", () => {
  it("normal end, client abort, upstream 5xx, abort while the pick is in flight: counts return to 0", async () => {
    h = await host({ configuration: glrConfig({ failurePenalty: 0 }), redis: { url: redis.url } });
    const normal = postChat(h).s;
    const aborted = postChat(h).s;
    const failed = postChat(h).s;
    await h.redisIdle();
    expect(sum(await loads())).toBe(3);
    normal.sendResponseHeaders({ ":status": "200" }, true);
    normal.complete();
    aborted.abort();
    failed.sendResponseHeaders({ ":status": "503" }, true);
    failed.complete();
    // The client goes away before Redis answered the pick: the lease taken must be released.
    const early = postChat(h).s;
    early.abort();
    await h.redisIdle();
    expect(sum(await loads())).toBe(0);
    expect(await client.zcard(`${NS}:leases`)).toBe(0);
  });

  it("a fail-fast host (5xx) gets a penalty that expires, so it stops attracting traffic", async () => {
    h = await host({ configuration: glrConfig({ failurePenalty: 3, failurePenaltySeconds: 1 }), redis: { url: redis.url }, clusters: { [CLUSTER]: hosts(2) } });
    const { s } = postChat(h);
    await h.redisIdle();
    const bad = s.forwarded!.upstream.address!;
    s.sendResponseHeaders({ ":status": "500" }, true);
    s.complete();
    await h.redisIdle();
    expect((await loads())[bad]).toBe(3);
    // The next three requests all avoid the failing host.
    for (let i = 0; i < 3; i++) {
      const n = postChat(h).s;
      await h.redisIdle();
      expect(n.forwarded!.upstream.address).not.toBe(bad);
    }
    await sleep(1100 + 250); // + the 250 ms expiry bucket a lease's cost leaves with (lua/README.md)
    await advanceWithIo(h, 6000); // ticks: reconcile settles the expired penalty
    expect((await loads())[bad]).toBe(0);
  });
});

describe("leases", () => {
  it("a crashed gateway's counts are gone after the lease TTL", async () => {
    const crashed = await host({ configuration: glrConfig({ leaseTTL: 2 }), redis: { url: redis.url } });
    postChat(crashed);
    postChat(crashed);
    await crashed.redisIdle();
    crashed.close(); // no release ever comes
    expect(sum(await loads())).toBe(2);
    await sleep(2100 + 250); // + the 250 ms expiry bucket a lease's cost leaves with (lua/README.md)
    h = await host({ configuration: glrConfig({ leaseTTL: 2 }), redis: { url: redis.url } });
    const { s } = postChat(h); // any acquire settles expired leases first
    await h.redisIdle();
    expect(s.forwarded).not.toBeNull();
    expect(sum(await loads())).toBe(1);
  });

  it("open streams renew their leases, so a long stream keeps its count", async () => {
    h = await host({ configuration: glrConfig({ leaseTTL: 2 }), redis: { url: redis.url } });
    const { s } = postChat(h);
    await h.redisIdle();
    for (let i = 0; i < 6; i++) {
      await sleep(500);
      h.advance(700); // ticks renew at a third of the TTL
      await h.redisIdle();
    }
    await advanceWithIo(h, 6000); // reconcile runs: the renewed lease is not expired
    expect(sum(await loads())).toBe(1);
    s.complete();
    await h.redisIdle();
    expect(sum(await loads())).toBe(0);
  });
});

describe("shedding", () => {
  const shedConfig = glrConfig({ maxRequestCount: 2, retryAfter: 3, debugHeader: "x-llmlb-debug" });

  it("answers 429 with Retry-After once every host is at maxRequestCount; high priority bypasses; low is shed earlier", async () => {
    h = await host({ configuration: shedConfig, redis: { url: redis.url }, clusters: { [CLUSTER]: hosts(2) } });
    // Low priority is limited to 50% of the limit: one per host.
    const low = [postChat(h, undefined, { "x-llm-priority": "low" }).s, postChat(h, undefined, { "x-llm-priority": "low" }).s];
    await h.redisIdle();
    expect(low.every((s) => s.forwarded !== null)).toBe(true);
    const lowShed = postChat(h, undefined, { "x-llm-priority": "low" }).s;
    await h.redisIdle();
    expect(lowShed.localResponse?.status).toBe(429);
    const normal = [postChat(h).s, postChat(h).s];
    await h.redisIdle();
    expect(normal.every((s) => s.forwarded !== null)).toBe(true);
    const shed = postChat(h).s;
    await h.redisIdle();
    expect(shed.forwarded).toBeNull();
    expect(shed.localResponse?.status).toBe(429);
    expect(shed.localResponse?.headers["retry-after"]).toBe("3");
    const high = postChat(h, undefined, { "x-llm-priority": "high" }).s;
    await h.redisIdle();
    expect(high.forwarded!.upstream.via).toBe("override");
    expect(sum(await loads())).toBe(5);
  });

  it("can answer 503 instead", async () => {
    h = await host({ configuration: glrConfig({ maxRequestCount: 1, shedStatus: 503 }), redis: { url: redis.url }, clusters: { [CLUSTER]: hosts(1) } });
    postChat(h);
    await h.redisIdle();
    const shed = postChat(h).s;
    await h.redisIdle();
    expect(shed.localResponse?.status).toBe(503);
  });
});

describe("cost", () => {
  it("tokens: prompt chars / 4 + max_tokens", async () => {
    h = await host({ configuration: glrConfig({ costMode: "tokens" }), redis: { url: redis.url }, clusters: { [CLUSTER]: hosts(1) } });
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "x".repeat(400) }], max_tokens: 50 });
    postChat(h, body);
    await h.redisIdle();
    expect(sum(await loads())).toBe(150);
  });

  it("a body that is not JSON is still balanced (cost 1 in count mode)", async () => {
    h = await host({ configuration: glrConfig(), redis: { url: redis.url } });
    const { s } = postChat(h, "{not json");
    await h.redisIdle();
    expect(s.forwarded!.upstream.via).toBe("override");
  });
});

describe("Redis unavailable", () => {
  it("falls back to per-VM least request, opens the breaker, and recovers", async () => {
    h = await host({ configuration: glrConfig({ breakerFailures: 2, breakerOpenSeconds: 5 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const first = postChat(h).s;
    expect(h.redisCalls.length).toBe(1);
    h.redisCalls[0].fail(); // NetworkError
    expect(first.forwarded!.upstream.via).toBe("override");
    const second = postChat(h).s;
    h.redisCalls[0].fail();
    expect(second.forwarded!.upstream.address).not.toBe(first.forwarded!.upstream.address); // local least request
    // Breaker open: no more waiting on Redis.
    const third = postChat(h).s;
    expect(h.redisCalls.length).toBe(0);
    expect(third.forwarded).not.toBeNull();
    expect(h.metric("llmlb_picks_total", { policy: "global_least_request", reason: "local_fallback" })).toBe(3);
    expect(h.metric("llmlb_redis_breakers_open", {})).toBe(1);
    h.advance(5001);
    const later = postChat(h).s;
    // Past breakerOpenSeconds a pick still does not wait on Redis (it would wait the whole pick
    // deadline while Redis is away): only the tick's TIME probe, next test, closes the breaker.
    expect(h.redisCalls.filter((c) => isScriptQuery(c.text)).length).toBe(0);
    expect(later.forwarded!.upstream.via).toBe("override");
  });

  it("the tick's TIME probe closes the breaker as soon as Redis answers, whatever the backoff", async () => {
    h = await host({ configuration: glrConfig({ breakerFailures: 1, breakerOpenSeconds: 60 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    postChat(h);
    h.redisCalls[0].fail(); // breaker open for 60 s
    expect(postChat(h).s.forwarded!.upstream.via).toBe("override"); // local fallback, no call
    expect(h.redisCalls.length).toBe(0);
    h.advance(500); // a tick: the probe goes out past the open breaker
    const probes = h.redisCalls.filter((c) => c.text.includes("TIME"));
    expect(probes.length).toBe(1);
    probes[0].reply("*2\r\n$10\r\n1795000000\r\n$6\r\n250000\r\n");
    const next = postChat(h).s;
    expect(next.forwarded).toBeNull(); // routed through Redis again, 59 s before the breaker would have allowed it
    const acquire = h.redisCalls.filter((c) => isScriptQuery(c.text));
    expect(acquire.length).toBe(1);
    // The probe taught the plugin Redis's clock: the acquire carries a deadline in it.
    expect(acquire[0].text).toMatch(/\r\n1795000\d{6}\r\n$/);
  });

  it("a Redis timeout does not fail the request", async () => {
    h = await host({ configuration: glrConfig({ timeout: 100 }), redis: "record" });
    const { s } = postChat(h);
    expect(s.forwarded).toBeNull();
    h.advance(101); // the host's call timeout -> NetworkError
    expect(s.forwarded).not.toBeNull();
  });
});

// Issue 11 items 1 and 2, issue 12's migration: the healer runs every tick and repeats while a
// backlog remains; an acquire without reply is released with a tombstone once Redis answers again;
// `compat: true` keeps Higress's counter hash.
describe("healer", () => {
  it("a backlog of 3,000 dead leases on 3 hosts is settled by ticks alone, in bounded calls", { timeout: 30_000 }, async () => {
    // A dead gateway's leases, written straight through the scripts (same pool as the plugin's).
    const pool = new Pool(client, "llm", CLUSTER);
    const addrs = hosts(3).map((x) => x.address);
    await pool.acquire({ leaseId: "dead-0", hosts: addrs, leaseTtlMs: 4_000, hostStaleMs: 3_600_000 });
    const taken = await Promise.all(Array.from({ length: 2_999 }, (_, i) => pool.acquire({ leaseId: `dead-${i + 1}`, leaseTtlMs: 4_000, rnd: i, hostStaleMs: 3_600_000 })));
    expect(taken.filter((r) => r.status !== "OK")).toEqual([]);
    const lastTaken = Date.now();
    expect(sum(await loads())).toBe(3_000);
    h = await host({ configuration: glrConfig({ leaseTTL: 2 }), redis: { url: redis.url }, clusters: { [CLUSTER]: hosts(3) } });
    const first = postChat(h).s; // the VM learns the pool (before the dead leases expire)
    await h.redisIdle();
    first.sendResponseHeaders({ ":status": "200" }, true);
    first.complete();
    await h.redisIdle();
    expect(sum(await loads())).toBe(3_000);
    await new Promise((r) => setTimeout(r, lastTaken + 4_300 - Date.now()));
    await advanceWithIo(h, 1000); // one tick: the healer runs (and repeats while more = 1)
    expect(sum(await loads())).toBe(0);
    await advanceWithIo(h, 2000);
    expect((await pool.leaseIds()).length).toBe(0); // the records are collected too
  });
});

describe("acquires without a reply", () => {
  it("are released with a tombstone once Redis answers again, so a late run writes nothing", async () => {
    h = await host({ configuration: glrConfig({ breakerFailures: 1, breakerOpenSeconds: 60 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const { s } = postChat(h);
    const acquire = h.redisCalls[0];
    const leaseId = /\r\n\$\d+\r\n([^\r]+:[0-9a-z]+)\r\n/.exec(acquire.text.split(NS + ":seen")[1])![1];
    acquire.fail(); // no reply: the request goes on locally
    expect(s.forwarded!.upstream.via).toBe("override");
    h.advance(500); // a tick: only the probe goes out while the breaker is open
    expect(h.redisCalls.map((c) => c.text.includes("TIME"))).toEqual([true]);
    h.redisCalls[0].reply("*2\r\n$10\r\n1795000000\r\n$1\r\n0\r\n");
    h.advance(500); // breaker closed: the given-up id goes out as a release with a tombstone
    const release = h.redisCalls.find((c) => c.text.includes(leaseId));
    expect(release).toBeDefined();
    expect(release!.text).toMatch(new RegExp(`\\r\\n${leaseId.replace(/[:]/g, "\\$&")}\\r\\n\\$1\\r\\n0\\r\\n\\$\\d+\\r\\n\\d+\\r\\n\\$\\d+\\r\\n\\d+\\r\\n\\$5\\r\\n60000\\r\\n$`));
  });
});

describe("compat: true (rolling migration from Higress)", () => {
  it("keeps Higress's counter hash: +1 per pick, -1 at the end of each stream", async () => {
    h = await host({ configuration: glrConfig({ compat: true }), redis: { url: redis.url }, clusters: { [CLUSTER]: hosts(2) } });
    const key = `higress:global_least_request_table:llm:${CLUSTER}`;
    const streams = [postChat(h).s, postChat(h).s, postChat(h).s];
    await h.redisIdle();
    const counts = await client.hgetall(key);
    expect(Object.values(counts).map(Number).reduce((a, b) => a + b, 0)).toBe(3);
    expect(Object.keys(counts).sort()).toEqual(hostList(2).sort());
    for (const s of streams) { s.sendResponseHeaders({ ":status": "200" }, true); s.complete(); }
    await h.redisIdle();
    expect(Object.values(await client.hgetall(key)).map(Number)).toEqual([0, 0]);
    expect(sum(await loads())).toBe(0);
  });
});

// Issue 11 item 4: a candidate list longer than one call may carry (lua/sync.lua, 500 hosts per
// call) is synced in chunks beside the picks; the set in Redis is swapped in whole.
describe("a 10,000-host pool", () => {
  it("is synced in bounded chunks, every host reaches Redis, and picks then go through Redis", { timeout: 30_000 }, async () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ({ address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8000`, health: "Healthy" as const }));
    h = await host({ configuration: glrConfig({ timeout: 3000 }), redis: { url: redis.url }, clusters: { [CLUSTER]: many } });
    const first = postChat(h).s; // no set in Redis yet: the sync starts, this pick falls back
    await h.redisIdle();
    expect(first.forwarded!.upstream.via).toBe("override");
    for (let i = 0; i < 40; i++) { h.advance(1); await h.redisIdle(); }
    const cand = (await client.keys("*:cand:*")).filter((k) => !k.includes(":next:"));
    expect(cand.length).toBe(1);
    expect(await client.scard(cand[0])).toBe(10_000);
    expect(Object.keys(await loads()).length).toBe(10_000);
    const before = Number(h.metric("llmlb_picks_total", { policy: "global_least_request", reason: "least_request" }) ?? 0);
    postChat(h);
    await h.redisIdle();
    expect(h.metric("llmlb_picks_total", { policy: "global_least_request", reason: "least_request" })).toBe(before + 1);
  });
});

describe("a 1,000-host pool behind two VMs", () => {
  it("the second VM leaves the list the first synced (its set less than half its lifetime old); a set past that is synced again", { timeout: 30_000 }, async () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({ address: `10.1.${i >> 8}.${i & 255}:8000`, health: "Healthy" as const }));
    h = await host({ configuration: glrConfig({ timeout: 3000 }), redis: { url: redis.url }, clusters: { [CLUSTER]: many }, workers: 2 });
    // A chunked sync (lua/sync.lua) ends in one RENAME of its staging set.
    const syncs = async () => Number(/^cmdstat_rename:calls=(\d+)/m.exec(await client.info("commandstats"))?.[1] ?? 0);
    const before = await syncs();
    postChat(h, undefined, {}, 0);
    for (let i = 0; i < 20; i++) { h.advance(1); await h.redisIdle(); }
    expect(await syncs()).toBe(before + 1);
    postChat(h, undefined, {}, 1);
    for (let i = 0; i < 20; i++) { h.advance(1); await h.redisIdle(); }
    expect(await syncs()).toBe(before + 1); // VM 1: the same list, fresh in Redis: not sent again
    const cand = (await client.keys("*:cand:*")).filter((k) => !k.includes(":next:"));
    await client.pexpire(cand[0], 10_000); // as if synced 20 s ago (candidateTTL 30 s)
    h.advance(16_000); // VM 0's list is due again (half the TTL)
    postChat(h, undefined, {}, 0);
    for (let i = 0; i < 20; i++) { h.advance(1); await h.redisIdle(); }
    expect(await syncs()).toBe(before + 2);
    expect(await client.scard(cand[0])).toBe(1000);
  });
});

// A Redis restart loses the leases of streams still open: the renewal (restore mode) counts
// them again once the pool is back, so the counts are exact within a renewal period.
describe("Redis lost an open stream's lease", () => {
  it("the next renewal counts it again; its end releases it", { timeout: 30_000 }, async () => {
    h = await host({ configuration: glrConfig({ leaseTTL: 3, timeout: 3000 }), redis: { url: redis.url }, clusters: { [CLUSTER]: hosts(2) } });
    const long = postChat(h).s;
    await h.redisIdle();
    expect(long.forwarded).not.toBeNull();
    expect(sum(await loads())).toBe(1);
    await client.flushall(); // as a restart without persistence
    const next = postChat(h).s; // syncs the candidate set again
    await h.redisIdle();
    next.sendResponseHeaders({ ":status": "200" }, true);
    next.complete();
    await h.redisIdle();
    expect(sum(await loads())).toBe(0); // the open stream is not counted...
    await advanceWithIo(h, 1_250); // ...until the next renewal (leaseTTL / 3)
    expect(sum(await loads())).toBe(1);
    long.sendResponseHeaders({ ":status": "200" }, true);
    long.complete();
    await h.redisIdle();
    expect(sum(await loads())).toBe(0);
  });
});
