// sync.lua (issue 11 item 4): a candidate list longer than one call may carry is staged in chunks
// of at most 500 hosts and swapped in whole by the last chunk; picks meanwhile see the old set.
import { beforeAll, describe, expect, it } from "vitest";
import type { Redis } from "ioredis";
import { useRedisSuite } from "../helpers/redis.js";
import { CALL_HOSTS, Pool, hostList, runScript } from "./pool.js";

const suite = useRedisSuite();
let redis: Redis;
beforeAll(() => { ({ redis } = suite); });

function chunk(pool: Pool, have: number, last: 0 | 1, hosts: string[], vm = "t") {
  return runScript(redis, "sync", [...pool.keys(), pool.stagingKey("fp", vm)], [60_000, 1_200_000, have, last, ...hosts]);
}

describe("sync.lua", () => {
  it("stages chunks and swaps the whole list in with the last one; a pick in between sees the old set", async () => {
    const pool = new Pool(redis);
    const old = hostList(2, 200);
    await pool.acquire({ leaseId: "s", hosts: old });
    await pool.release("s");
    const next = hostList(2 * CALL_HOSTS + 10);
    expect(await chunk(pool, 0, 0, next.slice(0, CALL_HOSTS))).toBe(CALL_HOSTS);
    expect(await chunk(pool, CALL_HOSTS, 0, next.slice(CALL_HOSTS, 2 * CALL_HOSTS))).toBe(2 * CALL_HOSTS);
    // Half-built: the candidate set is still the old one (new hosts are in load at 0, not candidates).
    expect((await redis.smembers(pool.candKey("fp"))).sort()).toEqual([...old].sort());
    const mid = await pool.acquire({ leaseId: "mid" });
    expect(old).toContain(mid.host);
    expect(await chunk(pool, 2 * CALL_HOSTS, 1, next.slice(2 * CALL_HOSTS))).toBe(next.length);
    expect(await redis.scard(pool.candKey("fp"))).toBe(next.length);
    expect(await redis.exists(pool.stagingKey())).toBe(0);
    expect(await redis.pttl(pool.candKey("fp"))).toBeGreaterThan(50_000);
  });

  it("a first chunk drops what an abandoned sync left; a lost chunk is refused, nothing swapped", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(CALL_HOSTS + 5);
    await chunk(pool, 0, 0, hostList(7, 100)); // abandoned
    expect(await chunk(pool, 0, 0, hosts.slice(0, CALL_HOSTS))).toBe(CALL_HOSTS);
    await redis.srem(pool.stagingKey(), hosts[0]); // as if a chunk had been lost
    await expect(chunk(pool, CALL_HOSTS, 1, hosts.slice(CALL_HOSTS))).rejects.toThrow(/does not hold the 500 hosts sent/);
    expect(await redis.exists(pool.candKey("fp"))).toBe(0);
  });

  it("two VMs syncing the same list at once do not mix their staging sets", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(CALL_HOSTS + 1);
    await chunk(pool, 0, 0, hosts.slice(0, CALL_HOSTS), "a");
    await chunk(pool, 0, 0, hosts.slice(0, CALL_HOSTS), "b");
    expect(await chunk(pool, CALL_HOSTS, 1, hosts.slice(CALL_HOSTS), "a")).toBe(hosts.length);
    expect(await chunk(pool, CALL_HOSTS, 1, hosts.slice(CALL_HOSTS), "b")).toBe(hosts.length);
    expect(await redis.scard(pool.candKey("fp"))).toBe(hosts.length);
  });
});
