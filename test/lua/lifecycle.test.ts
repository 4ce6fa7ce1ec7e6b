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
  it("an expired lease takes off exactly its own cost (reconcile script)", async () => {
    const pool = new Pool(redis);
    const [h] = hostList(1);
    await pool.acquire({ leaseId: "short", hosts: [h], cost: 3, leaseTtlMs: 300 });
    await pool.acquire({ leaseId: "long", cost: 5 });
    expect((await pool.loads()).get(h)).toBe(8);
    expect(await pool.reconcile()).toBe(0);
    await sleep(400);
    expect(await pool.reconcile()).toBe(1);
    expect((await pool.loads()).get(h)).toBe(5);
    expect(await pool.leaseIds()).toEqual(["long"]);
    await expectLoadMatchesLeases(pool);
  });

  it("acquire settles expired leases before picking", async () => {
    const pool = new Pool(redis);
    const [h] = hostList(1);
    await pool.acquire({ leaseId: "crashed-gateway", hosts: [h], cost: 4, leaseTtlMs: 100 });
    await pool.acquire({ leaseId: "live", cost: 1 });
    await sleep(200);
    expect(await pool.acquire({ leaseId: "next", cost: 1 })).toMatchObject({ status: "OK", load: 1 });
    expect(await pool.leaseIds()).toEqual(["live", "next"]);
  });

  it("reconcile honours its max and returns how many it removed", async () => {
    const pool = new Pool(redis);
    const [h] = hostList(1);
    for (let i = 0; i < 5; i++) await pool.acquire({ leaseId: `e${i}`, hosts: i === 0 ? [h] : undefined, leaseTtlMs: 300 });
    await sleep(400);
    expect(await pool.reconcile(2)).toBe(2);
    expect((await pool.loads()).get(h)).toBe(3);
    expect(await pool.reconcile(10)).toBe(3);
    expect((await pool.loads()).get(h)).toBe(0);
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
    await sleep(550);
    expect(await pool.reconcile()).toBe(1);
    expect(await pool.leaseIds()).toEqual(["stream"]);
    expect((await pool.loads()).get(h)).toBe(2);
  });
});

describe("penalties", () => {
  it("a failed request leaves a penalty on its host that steers traffic away, then expires", async () => {
    const pool = new Pool(redis);
    const [a, b] = hostList(2);
    const failed = await pool.acquire({ leaseId: "f", hosts: [a, b], rnd: 0 });
    expect(failed.host).toBe(a);
    expect(await pool.release("f", { penaltyCost: 4, penaltyTtlMs: 400 })).toBe(1);
    expect((await pool.loads()).get(a)).toBe(4);
    expect(await redis.hget(pool.leaseKey, "f#p")).toBe(`${a} 4`);
    for (let i = 0; i < 3; i++) expect((await pool.acquire({ leaseId: `n${i}`, rnd: i })).host).toBe(b);
    expect(await pool.release("f", { penaltyCost: 4, penaltyTtlMs: 400 })).toBe(0); // no second penalty
    expect((await pool.loads()).get(a)).toBe(4);

    await sleep(500);
    expect(await pool.reconcile()).toBe(1);
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
      for (const k of keys) ttls.set(k, await redis.pttl(k));
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
    const [a, b] = hostList(2);
    await pool.acquire({ leaseId: "x", hosts: [a, b], cost: 3, rnd: 0 });
    expect(await pool.inspect([b, "10.9.9.9:1", a])).toEqual([b, "0", a, "3"]);
    expect(await pool.inspect([])).toEqual([b, "0", a, "3"]);
    expect(await new Pool(redis).inspect([a])).toEqual([]);
  });
});
