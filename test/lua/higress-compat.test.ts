// Rolling migration from Higress's ai-load-balancer (issue 12), Lua side: with compat = 1 the
// scripts also keep Higress's in-flight counter hash `higress:global_least_request_table:<route>:
// <cluster>` (field ip:port -> count; shared-reference/higress-parity.md section 4): +1 at the
// pick, -1 at the stream's end or when the lease dies, never below 0. So a gateway still running
// Higress's plugin (which picks the lowest HGET among healthy hosts) sees our load.
import { beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { useRedisSuite } from "../helpers/redis.js";
import { Pool, hostList, sleep } from "./pool.js";
import { expectLoadMatchesLeases } from "./invariants.js";

const suite = useRedisSuite();
let redis: Redis;
beforeAll(() => { ({ redis } = suite); });

let routes = 0;
function higressKey(): string {
  return `higress:global_least_request_table:compat-${++routes}:outbound|8000||vllm.static`;
}

/** Higress's pick, as its reference describes it: the healthy host with the lowest counter, +1. */
async function higressPick(key: string, hosts: string[]): Promise<string> {
  let best = hosts[0];
  let bestLoad = Infinity;
  for (const h of hosts) {
    const load = Number((await redis.hget(key, h)) ?? "0") || 0;
    if (load < bestLoad) { best = h; bestLoad = load; }
  }
  await redis.hincrby(key, best, 1);
  return best;
}

async function counters(key: string): Promise<Record<string, number>> {
  const all = await redis.hgetall(key);
  return Object.fromEntries(Object.entries(all).map(([h, v]) => [h, Number(v)]));
}

describe("Higress counter hash (compat = 1)", () => {
  it("+1 per pick, -1 per release, equal to our in-flight count per host", async () => {
    const pool = new Pool(redis);
    const key = higressKey();
    const hosts = hostList(3);
    const picked: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await pool.acquire({ leaseId: `c${i}`, hosts: i === 0 ? hosts : undefined, rnd: i, compatKey: key, cost: 5 });
      expect(r.status).toBe("OK");
      picked.push(r.host!);
    }
    // Requests are counted, whatever their cost.
    expect(await counters(key)).toEqual(Object.fromEntries(hosts.map((h) => [h, picked.filter((p) => p === h).length])));
    expect(await pool.release("c0", { compatKey: key })).toBe(1);
    expect((await counters(key))[picked[0]]).toBe(picked.filter((p) => p === picked[0]).length - 1);
    for (let i = 1; i < 6; i++) await pool.release(`c${i}`, { compatKey: key });
    expect(await counters(key)).toEqual(Object.fromEntries(hosts.map((h) => [h, 0])));
    await expectLoadMatchesLeases(pool);
  });

  it("a gateway still on Higress's plugin routes around our load", async () => {
    const pool = new Pool(redis);
    const key = higressKey();
    const [a, b] = hostList(2);
    await pool.acquire({ leaseId: "ours1", hosts: [a], fp: "a", compatKey: key });
    await pool.acquire({ leaseId: "ours2", fp: "a", compatKey: key });
    expect(await higressPick(key, [a, b])).toBe(b);
    expect(await higressPick(key, [a, b])).toBe(b);
    // Their increments and ours share the field; our release takes off only ours.
    await pool.release("ours1", { compatKey: key });
    expect(await counters(key)).toEqual({ [a]: 1, [b]: 2 });
  });

  it("never below 0: a counter Higress's cleanup reset is not driven negative", async () => {
    const pool = new Pool(redis);
    const key = higressKey();
    const [a] = hostList(1);
    await pool.acquire({ leaseId: "x", hosts: [a], compatKey: key });
    await redis.hset(key, a, 0); // Higress's periodic cleanup, or an operator reset
    expect(await pool.release("x", { compatKey: key })).toBe(1);
    expect(await counters(key)).toEqual({ [a]: 0 });
  });

  it("a dead lease leaves the counter with its bucket (healer or acquire), renewals move it along", async () => {
    const pool = new Pool(redis);
    const key = higressKey();
    const hosts = hostList(2);
    const a = (await pool.acquire({ leaseId: "dies", hosts, rnd: 0, leaseTtlMs: 300, compatKey: key })).host!;
    const b = hosts.find((h) => h !== a)!;
    await pool.acquire({ leaseId: "lives", rnd: 0, leaseTtlMs: 300, compatKey: key });
    expect(await counters(key)).toEqual({ [a]: 1, [b]: 1 });
    expect(await pool.renew(60_000, ["lives"])).toBe(1);
    await sleep(700);
    expect(await pool.reconcile(100, key)).toMatchObject({ settled: 2 }); // the cost and the count entry
    expect(await counters(key)).toEqual({ [a]: 0, [b]: 1 });
    expect(Object.fromEntries(await pool.loads())).toEqual({ [a]: 0, [b]: 1 });
    await pool.release("lives", { compatKey: key });
    expect(await counters(key)).toEqual({ [a]: 0, [b]: 0 });
  });

  it("a host dropped as stale leaves Higress's counter too, and its old leases do not bring it back", async () => {
    const pool = new Pool(redis);
    const key = higressKey();
    const [a, b, c] = hostList(3);
    const stale = { hostStaleMs: 300, compatKey: key };
    await pool.acquire({ leaseId: "c1", fp: "onlyC", hosts: [c], ...stale });
    await pool.acquire({ leaseId: "a1", fp: "ab", hosts: [a, b], ...stale });
    expect(await counters(key)).toMatchObject({ [c]: 1 });
    await sleep(400);
    expect((await pool.acquire({ leaseId: "a2", fp: "ab", ...stale })).status).toBe("OK");
    expect(Object.keys(await counters(key)).sort()).toEqual([a, b].sort());
    expect(await pool.release("c1", { compatKey: key })).toBe(1);
    expect(Object.keys(await counters(key)).sort()).toEqual([a, b].sort());
    await pool.release("a1", { compatKey: key });
    await pool.release("a2", { compatKey: key });
    expect(await counters(key)).toEqual({ [a]: 0, [b]: 0 });
  });

  it("compat off writes nothing outside the pool's hash tag", async () => {
    const pool = new Pool(redis);
    const before = (await redis.keys("*")).sort();
    const higress = before.filter((k) => k.startsWith("higress:"));
    const snapshot = await Promise.all(higress.map((k) => redis.hgetall(k)));
    await pool.acquire({ leaseId: "x", hosts: hostList(2) });
    await pool.acquire({ leaseId: "y" });
    await pool.release("x");
    const added = (await redis.keys("*")).filter((k) => !before.includes(k));
    expect(added.length).toBeGreaterThan(0);
    for (const k of added) expect(k.startsWith(pool.ns)).toBe(true);
    expect(await Promise.all(higress.map((k) => redis.hgetall(k)))).toEqual(snapshot);
  });
});
