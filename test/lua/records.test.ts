// records.lua against a real redis-server: each VM stores its record and reads the others' with
// their stored time; a record older than stale_ms is deleted; malformed arguments write nothing.
import { describe, expect, it } from "vitest";
import { useRedisSuite } from "../helpers/redis.js";
import { runScript } from "./pool.js";

const suite = useRedisSuite();
const KEY = "{llmlb:r:c}:rec";

async function exchange(tag: string, record: string, staleMs = 1000, max = 64): Promise<string[]> {
  return (await runScript(suite.redis, "records", [KEY], [tag, record, staleMs, max])) as string[];
}

describe("records.lua", () => {
  it("returns the other VMs' records with their stored time, never the caller's own", async () => {
    await suite.redis.del(KEY);
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
    const ttl = await suite.redis.pttl(KEY);
    expect(ttl).toBeGreaterThan(1000);
    expect(ttl).toBeLessThanOrEqual(2000);
  });

  it("deletes a record stored longer ago than stale_ms (a VM gone) and a malformed one", async () => {
    await suite.redis.del(KEY);
    const [now] = await exchange("vmA", "vmA 1 0");
    await suite.redis.hset(KEY, "old", `${Number(now) - 5000} old 1 0`, "bad", "no-time-here");
    const got = await exchange("vmB", "vmB 1 0", 1000);
    expect(got.filter((_, i) => i % 2 === 0 && i > 0)).toEqual(["vmA 1 0"]);
    expect((await suite.redis.hkeys(KEY)).sort()).toEqual(["vmA", "vmB"]);
  });

  it("returns at most max other records", async () => {
    await suite.redis.del(KEY);
    for (const t of ["a", "b", "c"]) await exchange(t, `${t} 1 0`);
    expect(await exchange("d", "d 1 0", 1000, 2)).toHaveLength(5);
    expect(await exchange("d", "d 1 0", 1000, 0)).toHaveLength(1);
  });

  it("leaves out the tags it is told to skip (the caller's siblings), but still deletes them when stale", async () => {
    await suite.redis.del(KEY);
    const [now] = await exchange("a", "a 1 0");
    await exchange("b", "b 1 0");
    await suite.redis.hset(KEY, "gone", `${Number(now) - 5000} gone 1 0`);
    const got = (await runScript(suite.redis, "records", [KEY], ["c", "c 1 0", 1000, 64, "b", "gone"])) as string[];
    expect(got.filter((_, i) => i % 2 === 0 && i > 0)).toEqual(["a 1 0"]);
    expect((await suite.redis.hkeys(KEY)).sort()).toEqual(["a", "b", "c"]);
    await expect(runScript(suite.redis, "records", [KEY], ["c", "c 1 0", 1000, 64, ...Array.from({ length: 65 }, (_, i) => `s${i}`)])).rejects.toThrow(/at most 64 tags/);
  });

  it("refuses malformed arguments without writing", async () => {
    await suite.redis.del(KEY);
    await expect(runScript(suite.redis, "records", [KEY], ["", "x", 1000, 8])).rejects.toThrow(/tag/);
    await expect(runScript(suite.redis, "records", [KEY], ["t", "x", 0, 8])).rejects.toThrow(/stale_ms/);
    await expect(runScript(suite.redis, "records", [KEY], ["t", "x", 1000, -1])).rejects.toThrow(/max/);
    await expect(runScript(suite.redis, "records", [KEY], ["t".repeat(129), "x", 1000, 8])).rejects.toThrow(/tag longer/);
    await expect(runScript(suite.redis, "records", [KEY], ["t", "x".repeat(1048577), 1000, 8])).rejects.toThrow(/record longer/);
    expect(await suite.redis.exists(KEY)).toBe(0);
  });
});
