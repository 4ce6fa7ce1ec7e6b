// Healing (issue 11 item 1): a dead gateway's leases leave the counts within leaseTTL + 1 s
// whatever their number, in bounded script calls, and no pick ever counts an expired lease.
// A "dead gateway" is a connection that took leases and then stopped (no renew, no release);
// a live gateway keeps calling the healer (reconcile.lua) every 250 ms, again at once while it
// answers more = 1, as the plugin does.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { startRedis, type RedisFixture } from "../helpers/redis.js";
import { Pool, hostList, seededRandom, sleep } from "./pool.js";
import { expectLoadMatchesLeases } from "./invariants.js";

const TTL_MS = 3000;
const TTL_10K_MS = 3_000;
const HEALER_EVERY_MS = 250;
const HEALER_BATCH = 250; // the plugin's batch: reconcile.lua's cap

let server: RedisFixture;
let redis: Redis;
let dead: Redis;

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.port, server.host);
  dead = new Redis(server.port, server.host);
});
afterAll(async () => {
  redis.disconnect();
  dead.disconnect();
  if (server.owned) await server.stop();
});

/**
 * Takes `count` leases through `pool` (pipelined, as a busy gateway would), then renews them all
 * with leaseTtlMs at once, as the gateway's last renewal before it died: their TTL runs from
 * here, however long taking them took on a loaded machine.
 */
async function takeLeases(pool: Pool, count: number, tag: string, leaseTtlMs = TTL_MS, fp = "fp"): Promise<number> {
  const rand = seededRandom(count);
  const batch = 500;
  const ids: string[] = [];
  for (let start = 0; start < count; start += batch) {
    const calls = [];
    for (let i = start; i < Math.min(count, start + batch); i++) {
      ids.push(`${tag}-${i}`);
      calls.push(pool.acquire({ leaseId: `${tag}-${i}`, leaseTtlMs: 600_000, rnd: rand(), fp }));
    }
    for (const r of await Promise.all(calls)) expect(r.status).toBe("OK");
  }
  const renewedAt = Date.now();
  let renewed = 0;
  renewed += await pool.renew(leaseTtlMs, ids); // in renew.lua's chunks, as the plugin sends them
  expect(renewed).toBe(count);
  return renewedAt; // no lease expires before renewedAt + leaseTtlMs
}

/** The live gateway's healer loop until the pool's total load is `target`; returns when (ms). */
async function healUntil(pool: Pool, target: number, giveUpAt: number): Promise<{ at: number; calls: number[] }> {
  const settledPerCall: number[] = [];
  while (Date.now() < giveUpAt) {
    let more = 1;
    while (more === 1) {
      const r = await pool.reconcile(HEALER_BATCH);
      settledPerCall.push(r.settled + r.removed);
      more = r.more;
    }
    if ((await pool.totalLoad()) === target) return { at: Date.now(), calls: settledPerCall };
    await sleep(HEALER_EVERY_MS);
  }
  return { at: Infinity, calls: settledPerCall };
}

describe("a dead gateway's leases leave the counts within leaseTTL + 1 s", () => {
  for (const inFlight of [10, 1_000, 10_000]) {
    const ttl = inFlight > 1_000 ? TTL_10K_MS : TTL_MS;
    it(`${inFlight} leases in flight (leaseTTL ${ttl} ms)`, async () => {
      const deadPool = new Pool(dead, `heal-${inFlight}`);
      const livePool = new Pool(redis, `heal-${inFlight}`);
      const hosts = hostList(100);
      await livePool.acquire({ leaseId: "live-sync", hosts, leaseTtlMs: 600_000 });
      const started = await takeLeases(deadPool, inFlight, "dead", ttl);
      const lastTaken = Date.now();
      expect(await livePool.totalLoad()).toBe(inFlight + 1);
      // Nothing leaves before its TTL...
      await sleep(Math.max(0, started + ttl - 300 - Date.now()));
      expect(await livePool.reconcile(HEALER_BATCH)).toMatchObject({ settled: 0 });
      expect(await livePool.totalLoad()).toBe(inFlight + 1);
      // ...and everything is gone within TTL + 1 s of the last lease, in bounded calls.
      const healed = await healUntil(livePool, 1, lastTaken + ttl + 3_000);
      expect(healed.at - lastTaken).toBeLessThanOrEqual(ttl + 1_000);
      expect(Math.max(...healed.calls)).toBeLessThanOrEqual(2 * HEALER_BATCH);
      // The records are collected too, leaving exact books.
      await healUntil(livePool, 1, Date.now() + 1_000);
      expect(await livePool.leaseIds()).toEqual(["live-sync"]);
      await expectLoadMatchesLeases(livePool);
    }, 60_000);
  }
});

describe("an expired lease is never counted by a pick", () => {
  it("10,000 dead leases on one host: the next acquire, with no healer run, sees that host at 0", async () => {
    const pool = new Pool(redis, "never-counted");
    const [busy, idle] = hostList(2);
    await pool.acquire({ leaseId: "sync-busy", fp: "busy", hosts: [busy] });
    await pool.release("sync-busy");
    await takeLeases(new Pool(dead, "never-counted"), 10_000, "d", TTL_10K_MS, "busy");
    const lastTaken = Date.now();
    await pool.acquire({ leaseId: "live", fp: "both", hosts: [busy, idle], leaseTtlMs: 600_000 });
    expect(Object.fromEntries(await pool.loads())).toEqual({ [busy]: 10_000, [idle]: 1 });
    await sleep(lastTaken + TTL_10K_MS + 300 - Date.now()); // every dead lease's bucket has passed; nobody settled them
    const next = await pool.acquire({ leaseId: "next", fp: "both", leaseTtlMs: 600_000 });
    expect(next).toEqual({ status: "OK", host: busy, load: 0 });
    expect(Object.fromEntries(await pool.loads())).toEqual({ [busy]: 1, [idle]: 1 });
  }, 60_000);

  it("dead leases spread over 100 hosts and several buckets each: all settled before the pick", async () => {
    const pool = new Pool(redis, "never-counted-wide");
    const hosts = hostList(100);
    const live = hostList(1, 99)[0];
    await pool.acquire({ leaseId: "sync", fp: "dead", hosts, leaseTtlMs: TTL_MS });
    const deadPool = new Pool(dead, "never-counted-wide");
    for (let round = 0; round < 4; round++) {
      await takeLeases(deadPool, 100, `w${round}`, TTL_MS, "dead");
      await sleep(260); // the next round lands in the next 250 ms bucket
    }
    const lastTaken = Date.now();
    // The live gateway's view: the same hosts plus one more, holding one live lease.
    await pool.acquire({ leaseId: "live", fp: "live", hosts: [live], leaseTtlMs: 600_000 });
    await pool.acquire({ leaseId: "sync2", fp: "all", hosts: [...hosts, live], leaseTtlMs: 600_000 });
    await pool.release("sync2");
    const due = await redis.zcard(pool.leasesKey); // bucket aggregates only: lease records are not indexed
    expect(due).toBeGreaterThan(150); // several bucket entries per host (at most 401 < the 1,024 an acquire settles)
    await sleep(lastTaken + TTL_MS + 300 - Date.now());
    const r = await pool.acquire({ leaseId: "pick", fp: "all", leaseTtlMs: 600_000, rnd: 7 });
    expect(r.status).toBe("OK");
    expect(r.load).toBe(0);
    expect(r.host).not.toBe(live);
    expect(await pool.totalLoad()).toBe(2);
    await expectLoadMatchesLeases(pool); // dead records remain but count for nothing
  }, 30_000);
});
