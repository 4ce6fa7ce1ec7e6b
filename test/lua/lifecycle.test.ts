// Lease lifecycle against a real redis-server: release, expiry, renew, penalties, TTLs, inspect.
import { beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { Pool, hostList, sleep } from "./pool.js";
import { expectLoadMatchesLeases } from "./invariants.js";

const suite = useRedisSuite();
let server: RedisFixture;
let redis: Redis;
beforeAll(() => { ({ server, redis } = suite); });

describe("release", () => {
  it("removes the lease and its cost exactly once; unknown ids change nothing", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(2);
    const r = await pool.acquire({ leaseId: "a", hosts, cost: 3 });
    await pool.acquire({ leaseId: "b", cost: 2 });
    expect(await pool.release("a")).toBe(1);
    expect((await pool.loads()).get(r.host!)).toBe(0);
    await expectLoadMatchesLeases(pool);

    const before = await pool.snapshot();
    expect(await pool.release("a")).toBe(0);
    expect(await pool.release("never-acquired")).toBe(0);
    expect(await pool.release("never-acquired", { penaltyCost: 9, penaltyTtlMs: 1000 })).toBe(0);
    expect(await pool.snapshot()).toEqual(before);
  });

  it("clamps a host's load at 0 rather than going negative", async () => {
    const pool = new Pool(redis);
    const [h] = hostList(1);
    await pool.acquire({ leaseId: "a", hosts: [h], cost: 5 });
    await redis.zadd(pool.loadKey, 2, h); // drifted below the lease's cost
    expect(await pool.release("a")).toBe(1);
    expect((await pool.loads()).get(h)).toBe(0);
  });
});

describe("expiry and renewal", () => {
  it("an expired lease takes off exactly its own cost once its 250 ms bucket passed (reconcile script)", async () => {
    const pool = new Pool(redis);
    const [h] = hostList(1);
    await pool.acquire({ leaseId: "short", hosts: [h], cost: 3, leaseTtlMs: 300 });
    await pool.acquire({ leaseId: "long", cost: 5 });
    expect((await pool.loads()).get(h)).toBe(8);
    expect(await pool.reconcile()).toEqual({ settled: 0, removed: 0, more: 0 });
    await sleep(600); // 300 ms TTL + at most 250 ms of bucket rounding
    expect(await pool.reconcile()).toEqual({ settled: 1, removed: 1, more: 0 });
    expect((await pool.loads()).get(h)).toBe(5);
    expect(await pool.leaseIds()).toEqual(["long"]);
    await expectLoadMatchesLeases(pool);
  });

  it("acquire settles expired leases before picking", async () => {
    const pool = new Pool(redis);
    const [h] = hostList(1);
    await pool.acquire({ leaseId: "crashed-gateway", hosts: [h], cost: 4, leaseTtlMs: 100 });
    await pool.acquire({ leaseId: "live", cost: 1 });
    await sleep(400);
    expect(await pool.acquire({ leaseId: "next", cost: 1 })).toMatchObject({ status: "OK", load: 1 });
    // The dead lease's record stays until the healer collects it; it counts for nothing.
    await pool.reconcile();
    expect(await pool.leaseIds()).toEqual(["live", "next"]);
    await expectLoadMatchesLeases(pool);
  });

  it("reconcile honours its max, says when more is due, and a release of a dead lease changes nothing", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(5);
    // One lease per host: five bucket aggregates fall due together.
    await pool.acquire({ leaseId: "e0", hosts, leaseTtlMs: 300 });
    for (let i = 1; i < 5; i++) await pool.acquire({ leaseId: `e${i}`, leaseTtlMs: 300, rnd: i });
    expect(await pool.totalLoad()).toBe(5);
    await sleep(600);
    expect(await pool.release("e0")).toBe(0); // dead: its cost leaves with its bucket
    expect(await pool.reconcile(2)).toEqual({ settled: 2, removed: 2, more: 1 });
    expect(await pool.totalLoad()).toBe(3);
    expect(await pool.reconcile(10)).toEqual({ settled: 3, removed: 2, more: 0 });
    expect(await pool.totalLoad()).toBe(0);
    expect(await pool.leaseIds()).toEqual([]);
    await expect(pool.reconcile(0)).rejects.toThrow(/max must be an integer >= 1/);
  });

  it("renew keeps a lease alive past its original expiry; unknown or released ids are not recreated", async () => {
    const pool = new Pool(redis);
    const [h] = hostList(1);
    await pool.acquire({ leaseId: "stream", hosts: [h], cost: 2, leaseTtlMs: 400 });
    await pool.acquire({ leaseId: "abandoned", cost: 7, leaseTtlMs: 400 });
    await pool.acquire({ leaseId: "done", cost: 1 });
    expect(await pool.release("done")).toBe(1);
    expect(await pool.renew(60_000, ["stream", "ghost", "done"])).toBe(1);
    expect(await redis.hexists(pool.leaseKey, "done")).toBe(0);
    expect(await redis.zscore(pool.leasesKey, "ghost")).toBeNull();
    await expectLoadMatchesLeases(pool);
    await sleep(700);
    expect(await pool.reconcile()).toEqual({ settled: 1, removed: 1, more: 0 });
    expect(await pool.leaseIds()).toEqual(["stream"]);
    expect((await pool.loads()).get(h)).toBe(2);
    // A dead lease cannot be renewed back to life.
    expect(await pool.renew(60_000, ["abandoned"])).toBe(0);
    await expectLoadMatchesLeases(pool);
  });

  it("an id named twice in one renewal is renewed once: its old bucket loses its cost once, not twice", async () => {
    const pool = new Pool(redis);
    const [h] = hostList(1);
    await pool.acquire({ leaseId: "x", hosts: [h], cost: 2 });
    await pool.acquire({ leaseId: "y", cost: 1 }); // same host, same 250 ms bucket (most likely)
    expect(await pool.renew(120_000, ["x", "x"])).toBe(1);
    await expectLoadMatchesLeases(pool);
    expect(await pool.renewOpen(180_000, [["x", h, 2], ["y", h, 1], ["x", h, 2]])).toBe(2);
    await expectLoadMatchesLeases(pool);
    expect(await pool.totalLoad()).toBe(3);
  });

  it("restore mode counts again an open stream's lease Redis lost or let expire; tombstones and unknown hosts are left alone", async () => {
    const pool = new Pool(redis);
    const [a, b] = hostList(2);
    await pool.acquire({ leaseId: "lost", hosts: [a, b], cost: 3 });
    await pool.acquire({ leaseId: "late", cost: 2, leaseTtlMs: 300, rnd: 1 });
    await pool.release("gone", { tombstoneMs: 60_000 }); // a tombstone
    // Redis lost "lost" (as after a restart that kept the pool but not the lease).
    const [lostHost, , lostBucket] = (await redis.hget(pool.leaseKey, "lost"))!.split(" ");
    await redis.hdel(pool.leaseKey, "lost", `@${lostBucket} ${lostHost}`);
    await redis.zrem(pool.leasesKey, "lost", `@${lostBucket} ${lostHost}`);
    await redis.zincrby(pool.loadKey, -3, lostHost);
    await sleep(600); // "late" expired: its bucket passed while its stream is still open
    expect(await pool.reconcile()).toMatchObject({ settled: 1 });
    expect(await pool.totalLoad()).toBe(0);
    const restored = await pool.renewOpen(60_000, [["lost", lostHost, 3], ["late", a, 2], ["gone", a, 5], ["elsewhere", "10.9.9.9:1", 4]]);
    expect(restored).toBe(2);
    expect(await pool.totalLoad()).toBe(5);
    expect(await redis.hget(pool.leaseKey, "gone")).toMatch(/^~\d+$/);
    expect(await redis.hexists(pool.leaseKey, "elsewhere")).toBe(0);
    await redis.hdel(pool.leaseKey, "gone"); // the invariant check below reads lease records only
    await redis.zrem(pool.leasesKey, "gone");
    await expectLoadMatchesLeases(pool);
    // Renewed again: moved, not counted twice; released: gone.
    expect(await pool.renewOpen(60_000, [["lost", lostHost, 3], ["late", a, 2]])).toBe(2);
    expect(await pool.totalLoad()).toBe(5);
    expect(await pool.release("lost")).toBe(1);
    expect(await pool.release("late")).toBe(1);
    expect(await pool.totalLoad()).toBe(0);
    await expectLoadMatchesLeases(pool);
  });
});

describe("renewing many leases", () => {
  it("moves 300 leases of 10 hosts to a new bucket with exact books", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(10);
    await pool.acquire({ leaseId: "l0", hosts, leaseTtlMs: 5_000, cost: 2 });
    for (let i = 1; i < 300; i++) await pool.acquire({ leaseId: `l${i}`, leaseTtlMs: 5_000, rnd: i, cost: 1 + (i % 3) });
    await pool.release("l7");
    await expectLoadMatchesLeases(pool);
    const ids = Array.from({ length: 300 }, (_, i) => `l${i}`);
    const before = Date.now();
    expect(await pool.renew(60_000, ids)).toBe(299);
    await expectLoadMatchesLeases(pool);
    // All moved: the old aggregates gone, each host's leases in the bucket of now + 60 s. The renew
    // goes in calls of 64 ids, so a 250 ms bucket boundary may fall between two calls (seen once
    // on a loaded machine): at most two new buckets, every host in one of them.
    const aggregates = (await redis.hkeys(pool.leaseKey)).filter((f) => f.startsWith("@"));
    const buckets = new Set(aggregates.map((f) => Number(f.split(" ")[0].slice(1))));
    expect(buckets.size).toBeGreaterThanOrEqual(1);
    expect(buckets.size).toBeLessThanOrEqual(2);
    for (const b of buckets) expect(b).toBeGreaterThanOrEqual(before + 60_000);
    expect(new Set(aggregates.map((f) => f.split(" ")[1])).size).toBe(10);
    expect(aggregates.length).toBeLessThanOrEqual(buckets.size * 10);
  });
});

describe("penalties", () => {
  it("a failed request leaves a penalty on its host that steers traffic away, then expires", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(2);
    const failed = await pool.acquire({ leaseId: "f", hosts, rnd: 0 });
    const a = failed.host!;
    const b = hosts.find((h) => h !== a)!;
    expect(await pool.release("f", { penaltyCost: 4, penaltyTtlMs: 400 })).toBe(1);
    expect((await pool.loads()).get(a)).toBe(4);
    expect(await redis.hget(pool.leaseKey, "f#p")).toMatch(new RegExp(`^${a} 4 \\d+$`));
    for (let i = 0; i < 3; i++) expect((await pool.acquire({ leaseId: `n${i}`, rnd: i })).host).toBe(b);
    expect(await pool.release("f", { penaltyCost: 4, penaltyTtlMs: 400 })).toBe(0); // no second penalty
    expect((await pool.loads()).get(a)).toBe(4);

    await sleep(700);
    expect(await pool.reconcile()).toMatchObject({ settled: 1 });
    expect((await pool.loads()).get(a)).toBe(0);
    expect(await redis.hexists(pool.leaseKey, "f#p")).toBe(0);
    await expectLoadMatchesLeases(pool);
  });
});

describe("TTLs", () => {
  it("every key of the pool has a TTL after each kind of write, pool keys sharing one expiry", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(3);
    const leaseTtlMs = 1_000, candTtlMs = 2_000, hostStaleMs = 5_000;
    const opts = { leaseTtlMs, candTtlMs, hostStaleMs };
    const expectAllExpiring = async (minPoolTtl: number) => {
      const keys = await pool.allKeys();
      expect(keys).toEqual([pool.candKey("fp"), pool.leaseKey, pool.leasesKey, pool.loadKey, pool.seenKey].sort());
      const ttls = new Map<string, number>();
      // One MULTI: every PTTL read at the same instant (sequential reads drift on a loaded machine).
      const replies = (await keys.reduce((m, k) => m.pttl(k), redis.multi()).exec())!;
      keys.forEach((k, i) => ttls.set(k, Number(replies[i][1])));
      for (const [k, t] of ttls) expect({ k, positive: t > 0 }).toEqual({ k, positive: true });
      expect(ttls.get(pool.candKey("fp"))!).toBeLessThanOrEqual(candTtlMs);
      const poolTtls = [pool.loadKey, pool.leasesKey, pool.leaseKey, pool.seenKey].map((k) => ttls.get(k)!);
      expect(Math.max(...poolTtls) - Math.min(...poolTtls)).toBeLessThan(50);
      expect(Math.min(...poolTtls)).toBeGreaterThan(minPoolTtl - 1_000);
    };
    await pool.acquire({ leaseId: "a", hosts, ...opts });
    await expectAllExpiring(2 * hostStaleMs);
    await pool.acquire({ leaseId: "b", ...opts });
    await pool.release("a", { penaltyCost: 2, penaltyTtlMs: 500, poolTtlMs: 10_000 });
    await expectAllExpiring(2 * hostStaleMs);
    // A long renewal stretches the pool so it outlives the lease...
    expect(await pool.renew(3_600_000, ["b"])).toBe(1);
    await expectAllExpiring(7_200_000);
    // ...and a later write with a shorter pool TTL does not shorten it again.
    await pool.acquire({ leaseId: "c", ...opts });
    await expectAllExpiring(7_200_000);
  });

  it("a bucket aggregate written after the leases ZSET emptied gets the pool's expiry (the lease HASH kept its own)", async () => {
    const pool = new Pool(redis);
    const opts = { leaseTtlMs: 100, candTtlMs: 2_000, hostStaleMs: 2_000 };
    await pool.acquire({ leaseId: "dies", hosts: hostList(1), ...opts });
    await sleep(400); // its bucket passed
    // Settles that bucket (the leases ZSET empties and goes; the lease HASH keeps the dead record
    // and "#dead"), then writes a new aggregate: the ZSET is created again, with no TTL until now.
    expect((await pool.acquire({ leaseId: "next", rnd: 1, ...opts })).status).toBe("OK");
    const keys = [pool.loadKey, pool.leasesKey, pool.leaseKey, pool.seenKey];
    const ttls = ((await keys.reduce((m, k) => m.pttl(k), redis.multi()).exec())!).map(([, t]) => Number(t));
    for (const [i, k] of keys.entries()) expect({ k, expiring: ttls[i] > 0 }).toEqual({ k, expiring: true });
    expect(Math.max(...ttls) - Math.min(...ttls)).toBeLessThan(50); // one shared expiry
  });

  it("an abandoned pool vanishes by itself", async () => {
    const pool = new Pool(redis);
    await pool.acquire({ leaseId: "a", hosts: hostList(2), leaseTtlMs: 100, candTtlMs: 100, hostStaleMs: 100 });
    await pool.release("a", { poolTtlMs: 200 });
    expect((await pool.allKeys()).length).toBeGreaterThan(0);
    await sleep(500);
    expect(await pool.allKeys()).toEqual([]);
  });
});

describe("inspect", () => {
  it("returns host, load pairs for the given hosts present in the pool", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(2);
    const a = (await pool.acquire({ leaseId: "x", hosts, cost: 3, rnd: 0 })).host!;
    const b = hosts.find((h) => h !== a)!;
    expect(await pool.inspect([b, "10.9.9.9:1", a])).toEqual([b, "0", a, "3"]);
    expect(await pool.inspect([])).toEqual([b, "0", a, "3"]);
    expect(await new Pool(redis).inspect([a])).toEqual([]);
  });
});
