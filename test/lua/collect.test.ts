// The healer's collection of dead lease records (lib.lua collect_dead, via reconcile.lua): lease
// records carry their bucket and have no per-lease index entry, so the healer walks the lease
// HASH with HSCAN, its cursor in the field "#gc"; records of the earlier layout (indexed in the
// leases ZSET at 2^46 + bucket) are still collected through their index.
import { describe, expect, it } from "vitest";
import { useRedisSuite } from "../helpers/redis.js";
import { Pool, hostList, sleep } from "./pool.js";
import { expectLoadMatchesLeases } from "./invariants.js";

const suite = useRedisSuite();
const LEASE_BASE = 2 ** 46;

async function redisNow(pool: Pool): Promise<number> {
  const [sec, usec] = await pool.redis.time();
  return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
}

describe("collecting dead lease records", () => {
  it("an acquire writes its record only (no index entry); a release removes it", async () => {
    const pool = new Pool(suite.redis);
    await pool.acquire({ leaseId: "a", hosts: hostList(2) });
    expect((await suite.redis.zrange(pool.leasesKey, 0, -1)).every((m) => m.startsWith("@"))).toBe(true);
    expect(await pool.leaseIds()).toEqual(["a"]);
    expect(await pool.release("a")).toBe(1);
    expect(await pool.leaseIds()).toEqual([]);
  });

  it("walks a large lease HASH in bounded pages until every dead record is gone, then drops its cursor", async () => {
    const pool = new Pool(suite.redis);
    const hosts = hostList(10);
    await pool.acquire({ leaseId: "live", hosts, leaseTtlMs: 600_000 });
    // 600 leases of a gateway that died: no release ever comes. The HASH is a hashtable (> 512 fields).
    await Promise.all(Array.from({ length: 600 }, (_, i) => pool.acquire({ leaseId: `d${i}`, leaseTtlMs: 300, rnd: i })));
    await sleep(600);
    let removed = 0;
    let calls = 0;
    let sawCursor = false;
    while (removed < 600 && calls < 60) {
      const r = await pool.reconcile(100);
      expect(r.removed).toBeLessThanOrEqual(100);
      removed += r.removed;
      calls++;
      sawCursor ||= (await suite.redis.hexists(pool.leaseKey, "#gc")) === 1;
    }
    expect(removed).toBe(600);
    expect(calls).toBeGreaterThanOrEqual(6); // 100 per call at most
    expect(sawCursor).toBe(true); // the walk went on across calls
    expect(await pool.leaseIds()).toEqual(["live"]);
    // The pass completes (the cursor goes) with nothing more to remove.
    for (let i = 0; i < 10 && (await suite.redis.hexists(pool.leaseKey, "#gc")) === 1; i++) {
      expect(await pool.reconcile(100)).toMatchObject({ removed: 0, more: 0 });
    }
    expect(await suite.redis.hexists(pool.leaseKey, "#gc")).toBe(0);
    expect(await pool.totalLoad()).toBe(1);
    await expectLoadMatchesLeases(pool);
  });

  it("a pool whose leases all end by release is never walked", async () => {
    const pool = new Pool(suite.redis);
    await pool.acquire({ leaseId: "s", hosts: hostList(20), leaseTtlMs: 600_000 });
    await Promise.all(Array.from({ length: 800 }, (_, i) => pool.acquire({ leaseId: `l${i}`, leaseTtlMs: 600_000, rnd: i })));
    for (let i = 0; i < 100; i++) await pool.release(`l${i}`);
    // 700+ fields: a hashtable (listpack up to 128 by default, 512 in Debian's redis.conf), so a
    // walk would leave its cursor after a 100-field page.
    expect(await suite.redis.object("ENCODING", pool.leaseKey)).toBe("hashtable");
    expect(await pool.reconcile(100)).toEqual({ settled: 0, removed: 0, more: 0 });
    expect(await suite.redis.hmget(pool.leaseKey, "#gc", "#dead")).toEqual([null, null]);
    // A death (a bucket with a live lease passed) starts a walk, which ends by clearing its marks.
    await pool.acquire({ leaseId: "dies", leaseTtlMs: 300 });
    await sleep(600);
    expect(await pool.reconcile(100)).toMatchObject({ settled: 1 });
    expect(await suite.redis.hexists(pool.leaseKey, "#gc")).toBe(1);
    for (let i = 0; i < 10 && (await suite.redis.hexists(pool.leaseKey, "#gc")) === 1; i++) await pool.reconcile(100);
    expect(await suite.redis.hmget(pool.leaseKey, "#gc", "#gcs", "#gcp", "#dead")).toEqual([null, null, null, null]);
    expect((await pool.leaseIds()).includes("dies")).toBe(false);
    expect(await pool.leaseIds()).toHaveLength(701);
    await expectLoadMatchesLeases(pool);
  });

  it("a tombstone records its expiry and is collected once it passed; live leases are kept", async () => {
    const pool = new Pool(suite.redis);
    await pool.acquire({ leaseId: "keep", hosts: hostList(1), leaseTtlMs: 600_000 });
    expect(await pool.release("late", { tombstoneMs: 300 })).toBe(0);
    expect(await pool.reconcile()).toMatchObject({ removed: 0, more: 0 });
    expect(await pool.leaseIds()).toEqual(["keep", "late"]);
    await sleep(400);
    expect(await pool.reconcile()).toMatchObject({ removed: 1, more: 0 });
    expect(await pool.leaseIds()).toEqual(["keep"]);
  });

  it("non-numeric healer marks are read as a pass to run again, not a script error after the settle wrote", async () => {
    const pool = new Pool(suite.redis);
    await pool.acquire({ leaseId: "dies", hosts: hostList(1), leaseTtlMs: 100 });
    await pool.acquire({ leaseId: "keep", leaseTtlMs: 600_000 });
    await suite.redis.hset(pool.leaseKey, "#dead", "x", "#gc", "x", "#gcs", "x", "#gcp", "x");
    await sleep(400); // "dies"'s bucket passed: the next acquire settles it and notes a death
    expect((await pool.acquire({ leaseId: "next", leaseTtlMs: 600_000 })).status).toBe("OK");
    for (let i = 0; i < 5 && (await pool.leaseIds()).includes("dies"); i++) await pool.reconcile(100);
    expect(await pool.leaseIds()).toEqual(["keep", "next"]);
    expect(await suite.redis.hmget(pool.leaseKey, "#gc", "#gcs", "#gcp", "#dead")).toEqual([null, null, null, null]);
    await expectLoadMatchesLeases(pool);
  });

  it("records of the earlier layout are collected through their index; a renewal keeps their entry in step", async () => {
    const pool = new Pool(suite.redis);
    const [h] = hostList(1);
    await pool.acquire({ leaseId: "sync", hosts: [h], leaseTtlMs: 600_000 });
    await pool.release("sync");
    // Written as the earlier scripts wrote them: record + index entry at 2^46 + bucket.
    const now = await redisNow(pool);
    const bucket = (ms: number) => Math.ceil(ms / 250) * 250;
    const b = bucket(now + 400);
    const old = [["old-dead", `${h} 1 ${b}`], ["old-renewed", `${h} 1 ${b}`], ["old-tomb", "~"]];
    for (const [id, rec] of old) await suite.redis.hset(pool.leaseKey, id, rec);
    await suite.redis.hincrby(pool.leaseKey, `@${b} ${h}`, 2);
    await suite.redis.zadd(pool.leasesKey, LEASE_BASE + b, "old-dead", LEASE_BASE + b, "old-renewed", LEASE_BASE + now + 300, "old-tomb", b, `@${b} ${h}`);
    await suite.redis.zincrby(pool.loadKey, 2, h);
    expect(await pool.renew(600_000, ["old-renewed"])).toBe(1);
    expect(Number(await suite.redis.zscore(pool.leasesKey, "old-renewed"))).toBeGreaterThan(LEASE_BASE + now + 500_000);
    await sleep(700);
    const r = await pool.reconcile(100);
    expect(r).toMatchObject({ removed: 2, more: 0 });
    expect(await pool.leaseIds()).toEqual(["old-renewed"]);
    expect(await pool.totalLoad()).toBe(1);
    // Its release also leaves the index entry dangling; the healer drops it later, harmlessly.
    expect(await pool.release("old-renewed")).toBe(1);
    expect(await pool.totalLoad()).toBe(0);
  });
});
