// records.lua against a real redis-server: a gateway's VM stores its Envoy's records (its own and
// its siblings', each with its age) and reads the other gateways' with their stored time; a record
// older than stale_ms is deleted; malformed arguments write nothing.
import { describe, expect, it } from "vitest";
import { useRedisSuite } from "../helpers/redis.js";
import { runScript } from "./pool.js";

const suite = useRedisSuite();
const KEY = "{llmlb:r:c}:rec";
const AT = "{llmlb:r:c}:rec:at";
const KEYS = [KEY, AT];

async function exchange(tag: string, record: string, staleMs = 1000, max = 64): Promise<string[]> {
  return (await runScript(suite.redis, "records", KEYS, [staleMs, max, 1, tag, 0, record])) as string[];
}

/** The records of a reply (every other item after the time). */
const recordsOf = (reply: string[]) => reply.filter((_, i) => i % 2 === 0 && i > 0);

describe("records.lua", () => {
  it("returns the other VMs' records with their stored time, never the caller's own", async () => {
    await suite.redis.del(KEY, AT);
    const first = await exchange("vmA", "vmA 100 0\nh1 1 2 3 4 5 6 7 20");
    expect(first).toHaveLength(1); // the time alone: nobody else yet
    const now = Number(first[0]);
    expect(Math.abs(now - Date.now())).toBeLessThan(5000);
    const second = await exchange("vmB", "vmB 900 1");
    expect(second).toHaveLength(3);
    expect(Number(second[1])).toBe(now);
    expect(second[2]).toBe("vmA 100 0\nh1 1 2 3 4 5 6 7 20");
    // A's next call sees B's record and replaces its own.
    const third = await exchange("vmA", "vmA 200 0");
    expect(third.slice(2)).toEqual(["vmB 900 1"]);
    expect(await suite.redis.hget(KEY, "vmA")).toMatch(/^\d+ vmA 200 0$/);
    for (const key of KEYS) {
      const ttl = await suite.redis.pttl(key);
      expect(ttl).toBeGreaterThan(1000);
      expect(ttl).toBeLessThanOrEqual(2000);
    }
  });

  it("deletes a record stored longer ago than stale_ms (a VM gone) and a malformed one", async () => {
    await suite.redis.del(KEY, AT);
    const [now] = await exchange("vmA", "vmA 1 0");
    await suite.redis.hset(KEY, "old", `${Number(now) - 5000} old 1 0`, "bad", "no-time-here");
    const got = await exchange("vmB", "vmB 1 0", 1000);
    expect(recordsOf(got)).toEqual(["vmA 1 0"]);
    expect((await suite.redis.hkeys(KEY)).sort()).toEqual(["vmA", "vmB"]);
    expect((await suite.redis.zrange(AT, 0, -1)).sort()).toEqual(["vmA", "vmB"]);
  });

  it("reads only the records it returns: the newest max of 200, never the stale ones' bytes", async () => {
    await suite.redis.del(KEY, AT);
    const [now] = await exchange("first", "first 1 0");
    const big = "x".repeat(4096);
    for (let i = 0; i < 200; i++) await suite.redis.hset(KEY, `vm${i}`, `${Number(now) - i} ${big}${i}`);
    for (let i = 0; i < 200; i++) await suite.redis.zadd(AT, Number(now) - i, `vm${i}`);
    const got = await exchange("reader", "reader 1 0", 60_000, 3);
    // The newest others: first and vm0 (stored at now), vm1; no vm2..vm199 read.
    expect(recordsOf(got)).toHaveLength(3);
    expect(got.slice(1).filter((_, i) => i % 2 === 0).map(Number)).toEqual([Number(now), Number(now), Number(now) - 1]);
    // Records stored 100+ ms ago are stale at stale_ms 100: deleted by index, at most 64 per call.
    await exchange("reader", "reader 1 0", 100, 3);
    expect(await suite.redis.hlen(KEY)).toBeLessThanOrEqual(203 - 64 + 1);
    expect(await suite.redis.hlen(KEY)).toBe(await suite.redis.zcard(AT));
  });

  it("returns at most max other records", async () => {
    await suite.redis.del(KEY, AT);
    for (const t of ["a", "b", "c"]) await exchange(t, `${t} 1 0`);
    expect(await exchange("d", "d 1 0", 1000, 2)).toHaveLength(5);
    expect(await exchange("d", "d 1 0", 1000, 0)).toHaveLength(1);
  });

  it("stores an Envoy's records in one call, each at Redis's time less its age, and returns none of them", async () => {
    await suite.redis.del(KEY, AT);
    await exchange("other", "other 1 0");
    const got = (await runScript(suite.redis, "records", KEYS, [1000, 64, 2, "a", 0, "a 5 0", "b", 40, "b 1 0\nh1 1 2 3 4 5 6 7"])) as string[];
    expect(recordsOf(got)).toEqual(["other 1 0"]);
    const now = Number(got[0]);
    expect(await suite.redis.hget(KEY, "a")).toBe(`${now} a 5 0`);
    expect(await suite.redis.hget(KEY, "b")).toBe(`${now - 40} b 1 0\nh1 1 2 3 4 5 6 7`);
    // The other gateway's next call gets both, b with its age.
    const theirs = await exchange("other", "other 2 0");
    expect(theirs.slice(1)).toEqual(expect.arrayContaining([String(now), "a 5 0", String(now - 40)]));
    expect(recordsOf(theirs).sort()).toEqual(["a 5 0", "b 1 0\nh1 1 2 3 4 5 6 7"]);
  });

  it("refuses malformed arguments without writing", async () => {
    await suite.redis.del(KEY, AT);
    const call = (args: (string | number)[]) => runScript(suite.redis, "records", KEYS, args);
    await expect(call([1000, 8, 1, "", 0, "x"])).rejects.toThrow(/tag must not be empty/);
    await expect(call([0, 8, 1, "t", 0, "x"])).rejects.toThrow(/stale_ms/);
    await expect(call([1000, -1, 1, "t", 0, "x"])).rejects.toThrow(/max/);
    await expect(call([1000, 8, 0])).rejects.toThrow(/n must be/);
    await expect(call([1000, 8, 65, ...Array.from({ length: 65 }, (_, i) => [`t${i}`, 0, "x"]).flat()])).rejects.toThrow(/n must be <= 64/);
    await expect(call([1000, 8, 2, "t", 0, "x"])).rejects.toThrow(/expected 2 tag, age_ms, record triples/);
    await expect(call([1000, 8, 1, "t", 1001, "x"])).rejects.toThrow(/age_ms/);
    // One bad triple after a good one: nothing written.
    await expect(call([1000, 8, 2, "t", 0, "x", "t".repeat(129), 0, "x"])).rejects.toThrow(/tag longer/);
    await expect(call([1000, 8, 1, "t", 0, "x".repeat(1048577)])).rejects.toThrow(/record longer/);
    expect(await suite.redis.exists(KEY, AT)).toBe(0);
    await expect(runScript(suite.redis, "records", [KEY], [1000, 8, 1, "t", 0, "x"])).rejects.toThrow(/needs keys/);
  });
});
