// model.lua against a real redis-server: forgotten least-squares sums per host, shared by every
// caller; malformed arguments write nothing.
import { describe, expect, it } from "vitest";
import { useRedisSuite } from "../helpers/redis.js";
import { runScript } from "./pool.js";

const suite = useRedisSuite();
const KEY = "{llmlb:r:c}:lat";
const AT = "{llmlb:r:c}:lat:at";
const HOUR = 3600000;

function nums(s: string | null): number[] {
  return (s ?? "").split(" ").map(Number);
}

describe("model.lua", () => {
  it("adds x x^T, x y, y y and the weight of each observation, decaying the old sums", async () => {
    await suite.redis.del(KEY, AT);
    // TTFT field, k = 3: x = (1, u, q), y.
    expect(await runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h1|t", 1, 3, 100, 1, 2, 3])).toBe(1);
    // Upper triangle of x x^T: 1 2 3 / 4 6 / 9; x y: 100 200 300; y y: 10000; n: 1.
    expect(nums(await suite.redis.hget(KEY, "h1|t"))).toEqual([1, 2, 3, 4, 6, 9, 100, 200, 300, 10000, 1]);
    // Half decay, then a second observation, and a TPOT group (k = 2) with its own decay in the same call.
    expect(await runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h1|t", 0.5, 3, 10, 1, 0, 0, "h1|p", 0.9, 2, 7, 1, 4])).toBe(2);
    expect(nums(await suite.redis.hget(KEY, "h1|t"))).toEqual([1.5, 1, 1.5, 2, 3, 4.5, 60, 100, 150, 5100, 1.5]);
    expect(nums(await suite.redis.hget(KEY, "h1|p"))).toEqual([1, 4, 16, 7, 28, 49, 1]);
    // Each field decays by its own group's rate: the TPOT sums by 0.9, the TTFT ones untouched.
    expect(await runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h1|p", 0.9, 2, 0, 1, 0])).toBe(1);
    expect(nums(await suite.redis.hget(KEY, "h1|p"))).toEqual([1.9, 3.6, 14.4, 6.3, 25.2, 44.1, 1.9]);
    expect(nums(await suite.redis.hget(KEY, "h1|t"))).toEqual([1.5, 1, 1.5, 2, 3, 4.5, 60, 100, 150, 5100, 1.5]);
    const ttl = await suite.redis.pttl(KEY);
    expect(ttl).toBeGreaterThan(50000);
    expect(ttl).toBeLessThanOrEqual(60000);
  });

  it("restarts a field whose length does not match k", async () => {
    await suite.redis.hset(KEY, "h2|p", "1 2 3");
    await runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h2|p", 1, 2, 5, 1, 1]);
    expect(nums(await suite.redis.hget(KEY, "h2|p"))).toEqual([1, 1, 1, 5, 5, 25, 1]);
  });

  it("never keeps a sum that is not a finite number: such a field restarts, an observation whose sums overflow is refused", async () => {
    // Redis's Lua reads "inf" and "nan" as numbers (strtod), and inf x decay stays inf: a field that
    // once held one (an overflow, another writer) stayed so for good, and the plugin, which refuses
    // it, predicted that host as the fleet ever after.
    await suite.redis.del(KEY, AT);
    await suite.redis.hset(KEY, "h3|p", "inf 1 1 1 1 1 1", "h4|p", "1 nan 1 1 1 1 1");
    await runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h3|p", 0.5, 2, 5, 1, 1, "h4|p", 0.5, 2, 5, 1, 1]);
    expect(nums(await suite.redis.hget(KEY, "h3|p"))).toEqual([1, 1, 1, 5, 5, 25, 1]);
    expect(nums(await suite.redis.hget(KEY, "h4|p"))).toEqual([1, 1, 1, 5, 5, 25, 1]);
    // Finite arguments whose squares overflow: refused, nothing written (the earlier sums stay).
    await expect(runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h3|p", 1, 2, 1e200, 1, 1])).rejects.toThrow(/finite/);
    await expect(runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h3|p", 1, 2, 5, 1, 1e200])).rejects.toThrow(/finite/);
    expect(nums(await suite.redis.hget(KEY, "h3|p"))).toEqual([1, 1, 1, 5, 5, 25, 1]);
    // Sums that overflow though each product is finite: the field restarts from this observation.
    await suite.redis.hset(KEY, "h5|p", "1 1 1.7e308 1 1 1 1");
    await runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h5|p", 1, 2, 5, 1, 1.3e154]);
    const s = nums(await suite.redis.hget(KEY, "h5|p"));
    expect(s.every(Number.isFinite)).toBe(true);
    expect(s[s.length - 1]).toBe(1);
  });

  it("refuses malformed arguments without writing any group", async () => {
    await suite.redis.del(KEY, AT);
    await expect(runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h|t", 1, 1, 5, 1, "h|p", 0, 1, 5, 1])).rejects.toThrow(/decay/);
    await expect(runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h|t", 1.5, 1, 5, 1])).rejects.toThrow(/decay/);
    await expect(runScript(suite.redis, "model", [KEY, AT], [0, HOUR, "h|t", 1, 1, 5, 1])).rejects.toThrow(/ttl_ms/);
    await expect(runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h|t", 1, 1, 5, 1, "h|p", 1, 5, 1])).rejects.toThrow(/k must be/);
    await expect(runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h|t", 1, 2, 5, 1, "x"])).rejects.toThrow(/x2/);
    await expect(runScript(suite.redis, "model", [KEY, AT], [60000, 0, "h|t", 1, 1, 5, 1])).rejects.toThrow(/idle_ms/);
    // Infinity would turn the host's sums into NaN for good.
    await expect(runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h|t", 1, 1, "inf", 1])).rejects.toThrow(/y must be a finite number/);
    await expect(runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h|t", 1, 1, 5, "-inf"])).rejects.toThrow(/x1 must be a finite number/);
    expect(await suite.redis.exists(KEY, AT)).toBe(0);
  });

  it("forgets a host no one observed for idle_ms: its fields go, at most 16 hosts a call", async () => {
    await suite.redis.del(KEY, AT);
    const hosts = Array.from({ length: 20 }, (_, i) => `10.0.0.${i}:8000`);
    for (const h of hosts) await runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, `${h}|b`, 1, 1, 5, 1, `${h}|c`, 0.9, 1, 1, 1]);
    expect(await suite.redis.hlen(KEY)).toBe(40);
    expect(await suite.redis.zcard(AT)).toBe(20);
    await new Promise((r) => setTimeout(r, 20));
    // Observed by no one for 20 ms, with idle_ms 10: the next call (for another host) forgets 16 of
    // the 20, the one after the other 4; the host of the call stays.
    await runScript(suite.redis, "model", [KEY, AT], [60000, 10, "new:8000|p", 1, 1, 5, 1]);
    expect(await suite.redis.hlen(KEY)).toBe(40 - 32 + 1);
    await runScript(suite.redis, "model", [KEY, AT], [60000, 10, "new:8000|p", 1, 1, 5, 1]);
    expect(await suite.redis.hkeys(KEY)).toEqual(["new:8000|p"]);
    expect(await suite.redis.zrange(AT, 0, -1)).toEqual(["new:8000"]);
    const ttl = await suite.redis.pttl(AT);
    expect(ttl).toBeGreaterThan(50000);
  });

  it("gives the hosts of a hash without times (an earlier version's) this call's time once, then forgets them when idle", async () => {
    await suite.redis.del(KEY, AT);
    await suite.redis.hset(KEY, "old:8000|b", "1 1 1 1", "old:8000|t", "1 2 3", "other:8000|p", "1 1 1 1 1 1 1");
    await runScript(suite.redis, "model", [KEY, AT], [60000, HOUR, "h:8000|p", 1, 1, 5, 1]);
    expect((await suite.redis.zrange(AT, 0, -1)).sort()).toEqual(["h:8000", "old:8000", "other:8000"]);
    expect(await suite.redis.hlen(KEY)).toBe(4);
    await new Promise((r) => setTimeout(r, 20));
    await runScript(suite.redis, "model", [KEY, AT], [60000, 10, "h:8000|p", 1, 1, 5, 1]);
    expect(await suite.redis.hkeys(KEY)).toEqual(["h:8000|p"]);
  });
});
