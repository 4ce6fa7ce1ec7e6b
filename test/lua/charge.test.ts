// charge.lua against a real redis-server: leases a GIVEN host with acquire.lua's accounting
// (shared counts, release, idempotent retry, limit, candidate checks).
import { beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { Pool, SCRIPTS, hostList } from "./pool.js";
import { expectLoadMatchesLeases } from "./invariants.js";

const suite = useRedisSuite();
let server: RedisFixture;
let redis: Redis;
beforeAll(() => { ({ server, redis } = suite); });

interface ChargeOptions { leaseId: string; host: string; cost?: number; limit?: number; hosts?: string[]; fp?: string }

async function charge(pool: Pool, o: ChargeOptions): Promise<string[]> {
  const hosts = o.hosts ?? [];
  const script = SCRIPTS.charge;
  return (await redis.eval(script.text, 5, ...pool.keys(o.fp), o.leaseId, o.cost ?? 1, 60_000, 60_000, o.limit ?? 0, 0, 600_000,
    o.host, hosts.length, ...hosts)) as string[];
}

describe("charge.lua", () => {
  it("is bundled with lib.lua and has its SHA-1", () => {
    expect(SCRIPTS.charge.text).toContain("read_acquire_args('charge', 9)");
    expect(SCRIPTS.charge.sha1).toMatch(/^[0-9a-f]{40}$/);
  });

  it("leases exactly the given host, even when another is less loaded", async () => {
    const pool = new Pool(redis);
    const [a, b] = hostList(2);
    expect(await charge(pool, { leaseId: "l1", host: b, hosts: [a, b] })).toEqual(["OK", b, "0"]);
    expect(await charge(pool, { leaseId: "l2", host: b })).toEqual(["OK", b, "1"]);
    expect(Object.fromEntries(await pool.loads())).toEqual({ [a]: 0, [b]: 2 });
    await expectLoadMatchesLeases(pool);
  });

  it("shares counts with acquire.lua: least request avoids the charged host, release.lua settles it", async () => {
    const pool = new Pool(redis);
    const [a, b] = hostList(2);
    await charge(pool, { leaseId: "c1", host: a, hosts: [a, b] });
    expect((await pool.acquire({ leaseId: "q1" })).host).toBe(b);
    expect(await pool.release("c1")).toBe(1);
    expect(Object.fromEntries(await pool.loads())).toEqual({ [a]: 0, [b]: 1 });
    await expectLoadMatchesLeases(pool);
  });

  it("a retried call with the same lease id does not count twice", async () => {
    const pool = new Pool(redis);
    const [a, b] = hostList(2);
    await charge(pool, { leaseId: "l1", host: a, hosts: [a, b] });
    // Even if the retry names another host, the lease already written stands.
    expect(await charge(pool, { leaseId: "l1", host: b })).toEqual(["OK", a, "1"]);
    expect((await pool.loads()).get(a)).toBe(1);
  });

  it("asks for the candidate list when the set is missing, and writes nothing", async () => {
    const pool = new Pool(redis);
    expect(await charge(pool, { leaseId: "l1", host: hostList(1)[0], fp: "unknown" })).toEqual(["NEED_CANDIDATES"]);
    expect(await pool.allKeys()).toEqual([]);
  });

  it("refuses a host outside the candidate set without charging it", async () => {
    const pool = new Pool(redis);
    const [a, b, c] = hostList(3);
    expect(await charge(pool, { leaseId: "l1", host: c, hosts: [a, b] })).toEqual(["NO_CANDIDATE"]);
    expect((await pool.loads()).has(c)).toBe(false);
    expect(await pool.leaseIds()).toEqual([]);
  });

  it("sheds when the host's load plus the cost exceeds the limit", async () => {
    const pool = new Pool(redis);
    const [a] = hostList(1);
    expect((await charge(pool, { leaseId: "l1", host: a, hosts: [a], limit: 2 }))[0]).toBe("OK");
    expect((await charge(pool, { leaseId: "l2", host: a, limit: 2 }))[0]).toBe("OK");
    expect(await charge(pool, { leaseId: "l3", host: a, limit: 2 })).toEqual(["SHED", a, "2"]);
    expect((await pool.loads()).get(a)).toBe(2);
  });

  it("rejects malformed arguments before writing", async () => {
    const pool = new Pool(redis);
    await expect(charge(pool, { leaseId: "l1", host: "" , hosts: ["10.0.0.1:8000"] })).rejects.toThrow(/host must not be empty/);
    await expect(charge(pool, { leaseId: "l1", host: "h", cost: 0 })).rejects.toThrow(/cost must be an integer >= 1/);
    expect(await pool.allKeys()).toEqual([]);
  });
});
