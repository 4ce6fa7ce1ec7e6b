// The Lua side of the pick deadline (issue 11 item 2): an acquire carries its deadline in Redis's
// clock and is refused when it arrives late (no phantom lease); a reply the plugin no longer
// wants is released by id, and a release that overtakes its own acquire leaves a tombstone so the
// acquire, arriving later, writes nothing.
import { beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { useRedisSuite } from "../helpers/redis.js";
import { Pool, SCRIPTS, hostList, runScript } from "./pool.js";
import { expectLoadMatchesLeases } from "./invariants.js";

const suite = useRedisSuite();
let redis: Redis;
beforeAll(() => { ({ redis } = suite); });

async function redisNowMs(): Promise<number> {
  const [sec, usec] = await redis.time();
  return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
}

describe("acquire deadline", () => {
  it("a call past its deadline is refused with LATE and Redis's time, writing nothing", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(3);
    await pool.acquire({ leaseId: "first", hosts });
    const before = await pool.snapshot();
    const now = await redisNowMs();
    const late = await pool.acquire({ leaseId: "late", deadlineMs: now - 1 });
    expect(late.status).toBe("LATE");
    expect(Math.abs(late.load! - now)).toBeLessThan(5_000); // Redis's clock, for the plugin's offset
    expect(await pool.snapshot()).toEqual(before);
    // Every acquire-like script honours it.
    const prefix = await redis.evalsha(SCRIPTS.prefix.sha1, 6, ...pool.keys(), `${pool.ns}:p:m:x`,
      "late2", 1, 60_000, 60_000, 0, 0, 600_000, 1800, 8, 1.5, 0, 0, now - 1).catch(() =>
      redis.eval(SCRIPTS.prefix.text, 6, ...pool.keys(), `${pool.ns}:p:m:x`,
        "late2", 1, 60_000, 60_000, 0, 0, 600_000, 1800, 8, 1.5, 0, 0, now - 1)) as string[];
    expect(prefix[0]).toBe("LATE");
    const charge = await runScript(redis, "charge", pool.keys(), ["late3", 1, 60_000, 60_000, 0, 0, 600_000, hosts[0], 0, now - 1]) as string[];
    expect(charge[0]).toBe("LATE");
    expect(await pool.snapshot()).toEqual(before);
  });

  it("a call within its deadline (or with deadline 0) is served as before", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(2);
    const now = await redisNowMs();
    expect((await pool.acquire({ leaseId: "a", hosts, deadlineMs: now + 10_000 })).status).toBe("OK");
    expect((await pool.acquire({ leaseId: "b", deadlineMs: 0 })).status).toBe("OK");
    await expectLoadMatchesLeases(pool);
  });

  it("refuses a malformed deadline and extra arguments before writing", async () => {
    const pool = new Pool(redis);
    await expect(runScript(redis, "acquire", pool.keys(), ["x", 1, 1000, 1000, 0, 0, 0, 1, "h:1", "soon"]))
      .rejects.toThrow(/deadline_ms must be an integer/);
    await expect(runScript(redis, "acquire", pool.keys(), ["x", 1, 1000, 1000, 0, 0, 0, 1, "h:1", 0, 0, 7]))
      .rejects.toThrow(/too many arguments/);
    expect(await pool.allKeys()).toEqual([]);
  });
});

describe("replies the plugin no longer wants", () => {
  it("an OK that came back after the stream moved on is undone by releasing its id", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(2);
    await pool.acquire({ leaseId: "kept", hosts });
    const unwanted = await pool.acquire({ leaseId: "gave-up" });
    expect(unwanted.status).toBe("OK");
    expect(await pool.release("gave-up")).toBe(1);
    expect(await pool.totalLoad()).toBe(1);
    await expectLoadMatchesLeases(pool);
  });

  it("a release that overtakes its acquire leaves a tombstone: the acquire answers RELEASED and writes nothing", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(2);
    await pool.acquire({ leaseId: "kept", hosts });
    expect(await pool.release("slow", { tombstoneMs: 2_000 })).toBe(0);
    const before = await pool.totalLoad();
    expect(await pool.acquire({ leaseId: "slow" })).toEqual({ status: "RELEASED", host: undefined, load: undefined });
    expect(await pool.totalLoad()).toBe(before);
    expect(await pool.release("slow", { tombstoneMs: 2_000 })).toBe(0); // still 0, still one tombstone
    // The tombstone is collected by the healer once it expires.
    // A tombstone records its own expiry: "~<Redis ms>", 2 s from the release.
    const [sec] = await redis.time();
    const until = Number((await redis.hget(pool.leaseKey, "slow"))!.slice(1));
    expect(until - Number(sec) * 1000).toBeGreaterThan(1_000);
    expect(until - Number(sec) * 1000).toBeLessThanOrEqual(3_000);
    await new Promise((r) => setTimeout(r, 2_100));
    expect((await pool.reconcile()).removed).toBe(1);
    expect(await redis.hexists(pool.leaseKey, "slow")).toBe(0);
    await expectLoadMatchesLeases(pool);
  });

  it("without tombstone_ms an unknown release writes nothing (earlier behaviour)", async () => {
    const pool = new Pool(redis);
    await pool.acquire({ leaseId: "kept", hosts: hostList(1) });
    const before = await pool.snapshot();
    expect(await pool.release("never")).toBe(0);
    expect(await pool.snapshot()).toEqual(before);
  });
});
