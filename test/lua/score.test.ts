// score.lua against a real redis-server: AdaptiveScore's global pick (local score x (global load + 1),
// lowest wins, ties at random) taking acquire.lua's lease, so cluster_metrics' global in-flight counts
// are released, renewed and expire like every other lease.
import { beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { Pool, SCRIPTS } from "./pool.js";
import { expectLoadMatchesLeases } from "./invariants.js";

const suite = useRedisSuite();
let server: RedisFixture;
let redis: Redis;
beforeAll(() => { ({ server, redis } = suite); });

// Pool members are the plugin's tokens for services (cluster names hold '|', which hosts may not).
const A = "svc-0123456789abcdef";
const B = "svc-fedcba9876543210";

interface ScoreOptions { leaseId: string; scored: Array<[string, number]>; hosts?: string[]; limit?: number; rnd?: number }

async function score(pool: Pool, o: ScoreOptions): Promise<string[]> {
  const hosts = o.hosts ?? [];
  const pairs = o.scored.flatMap(([h, s]) => [h, s]);
  return (await redis.eval(SCRIPTS.score.text, 5, ...pool.keys(), o.leaseId, 1, 60_000, 60_000, o.limit ?? 0, o.rnd ?? 12345, 600_000,
    o.scored.length, ...pairs, hosts.length, ...hosts)) as string[];
}

describe("score.lua", () => {
  it("weighs each local score by the global load + 1 and leases the lowest", async () => {
    const pool = new Pool(redis);
    // Both unloaded: the lower local score wins.
    expect(await score(pool, { leaseId: "l1", scored: [[A, 2], [B, 3]], hosts: [A, B] })).toEqual(["OK", A, "0", "adaptive_score"]);
    // A: 2 x (1 + 1) = 4 > B: 3 x 1 = 3
    expect(await score(pool, { leaseId: "l2", scored: [[A, 2], [B, 3]] })).toEqual(["OK", B, "0", "adaptive_score"]);
    // A: 2 x 2 = 4 < B: 3 x 2 = 6
    expect((await score(pool, { leaseId: "l3", scored: [[A, 2], [B, 3]] }))[1]).toBe(A);
    expect(Object.fromEntries(await pool.loads())).toEqual({ [A]: 2, [B]: 1 });
    await expectLoadMatchesLeases(pool);
    expect(await pool.release("l1")).toBe(1);
    expect((await pool.loads()).get(A)).toBe(1);
  });

  it("breaks ties at random (both tied services are chosen across seeds)", async () => {
    const seen = new Set<string>();
    for (let rnd = 1; rnd <= 20; rnd++) {
      const pool = new Pool(redis);
      seen.add((await score(pool, { leaseId: "t", scored: [[A, 1], [B, 1]], hosts: [A, B], rnd }))[1]);
    }
    expect(seen).toEqual(new Set([A, B]));
  });

  it("ignores scored services outside the candidate set; none left -> NO_CANDIDATE, nothing written", async () => {
    const pool = new Pool(redis);
    expect((await score(pool, { leaseId: "l1", scored: [[A, 9], [B, 1]], hosts: [A] }))[1]).toBe(A);
    const other = new Pool(redis);
    expect(await score(other, { leaseId: "l2", scored: [[B, 1]], hosts: [A] })).toEqual(["NO_CANDIDATE"]);
    expect(await other.leaseIds()).toEqual([]);
  });

  it("a retried lease id does not count twice; a missing set asks for candidates", async () => {
    const pool = new Pool(redis);
    await score(pool, { leaseId: "l1", scored: [[A, 1]], hosts: [A, B] });
    expect((await score(pool, { leaseId: "l1", scored: [[B, 1]] }))[1]).toBe(A);
    expect((await pool.loads()).get(A)).toBe(1);
    expect(await score(new Pool(redis), { leaseId: "x", scored: [[A, 1]] })).toEqual(["NEED_CANDIDATES"]);
  });

  it("rejects malformed arguments before writing", async () => {
    const pool = new Pool(redis);
    await expect(score(pool, { leaseId: "l1", scored: [], hosts: [A] })).rejects.toThrow(/k must be an integer >= 1/);
    await expect(score(pool, { leaseId: "l1", scored: [[A, -1]], hosts: [A] })).rejects.toThrow(/must be a number >= 0/);
    expect(await pool.allKeys()).toEqual([]);
  });
});
