// acquire.lua against a real redis-server: least-loaded pick, ties, candidates, limit, staleness.
import { beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { Pool, hostList, runScript, seededRandom, sleep } from "./pool.js";
import { expectLoadMatchesLeases } from "./invariants.js";

const suite = useRedisSuite();
let server: RedisFixture;
let redis: Redis;
beforeAll(() => { ({ server, redis } = suite); });

describe("candidate sets", () => {
  it("asks for the candidate list when the set for the fingerprint is missing, and writes nothing", async () => {
    const pool = new Pool(redis);
    expect(await pool.acquire({ leaseId: "l1", fp: "f1" })).toEqual({ status: "NEED_CANDIDATES", host: undefined, load: undefined });
    expect(await pool.allKeys()).toEqual([]);
  });

  it("answers OK as exactly {\"OK\", host, load_before}: the shape the plugin tests' recorded replies use (test/plugin/harness.ts acquireOk)", async () => {
    const pool = new Pool(redis);
    const [h] = hostList(1);
    const reply = await runScript(redis, "acquire", pool.keys("shape"), ["l1", 1, 60_000, 60_000, 0, 0, 600_000, 1, h]);
    expect(reply).toEqual(["OK", h, "0"]);
  });

  it("syncs the list, then serves n = 0 calls from the stored set until it expires", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(3);
    const first = await pool.acquire({ leaseId: "l1", fp: "f1", hosts, candTtlMs: 300 });
    expect(first.status).toBe("OK");
    expect((await redis.smembers(pool.candKey("f1"))).sort()).toEqual(hosts);
    expect([...(await pool.loads()).keys()].sort()).toEqual(hosts);
    expect((await redis.zrange(pool.seenKey, 0, -1)).sort()).toEqual(hosts);

    expect((await pool.acquire({ leaseId: "l2", fp: "f1", candTtlMs: 300 })).status).toBe("OK");
    // Another fingerprint (another healthy-host view) has its own set.
    expect((await pool.acquire({ leaseId: "l3", fp: "f2" })).status).toBe("NEED_CANDIDATES");

    await sleep(400);
    expect((await pool.acquire({ leaseId: "l4", fp: "f1" })).status).toBe("NEED_CANDIDATES");
    // Loads survive the candidate set: only the set expired.
    expect([...(await pool.loads()).values()].reduce((a, b) => a + b, 0)).toBe(2);
  });

  it("a resync replaces the set: a host missing from the new list is no longer picked", async () => {
    const pool = new Pool(redis);
    const [a, b, c] = hostList(3);
    await pool.acquire({ leaseId: "l1", hosts: [a, b, c] });
    await pool.acquire({ leaseId: "l2", hosts: [a, b] }); // same fp, new list (hash collision case)
    expect((await redis.smembers(pool.candKey("fp"))).sort()).toEqual([a, b]);
    for (let i = 0; i < 6; i++) {
      const r = await pool.acquire({ leaseId: `x${i}`, rnd: i });
      expect(r.host).not.toBe(c);
    }
  });

  it("asks again when none of the set's hosts is in the pool any more, and heals on resend", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(2);
    await pool.acquire({ leaseId: "l1", hosts });
    await redis.zrem(pool.loadKey, ...hosts); // as if another gateway dropped them as stale
    expect((await pool.acquire({ leaseId: "l2" })).status).toBe("NEED_CANDIDATES");
    expect((await pool.acquireWithSync({ leaseId: "l2", hosts })).status).toBe("OK");
  });

  it("a list synced less than half its lifetime ago is not synced again (one VM of a fleet does it), until then", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(300);
    const calls = async (name: string) => Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, "m").exec(await redis.info("commandstats"))?.[1] ?? 0);
    expect((await pool.acquire({ leaseId: "first", fp: "x", hosts, candTtlMs: 4000 })).status).toBe("OK");
    const sadd = await calls("sadd");
    for (let i = 0; i < 10; i++) expect((await pool.acquire({ leaseId: `vm${i}`, fp: "x", hosts, candTtlMs: 4000, rnd: i + 1 })).status).toBe("OK");
    expect(await calls("sadd")).toBe(sadd); // nine VMs' resends: nothing rewritten
    await redis.pexpire(pool.candKey("x"), 1900); // as 2.1 s later: past half the set's lifetime
    expect((await pool.acquire({ leaseId: "later", fp: "x", hosts, candTtlMs: 4000 })).status).toBe("OK");
    expect(await calls("sadd")).toBe(sadd + 2); // synced in full: one SADD per 200 hosts (ARG_CHUNK)
    expect(await redis.pttl(pool.candKey("x"))).toBeGreaterThan(3000);
  });

  it("never picks a host outside the candidate set, even when it is the least loaded (fast path)", async () => {
    const pool = new Pool(redis);
    const all = hostList(6);
    await pool.acquire({ leaseId: "seed", fp: "all", hosts: all });
    await pool.release("seed");
    const subset = [all[1], all[4]];
    await pool.acquire({ leaseId: "s0", fp: "sub", hosts: subset });
    await pool.release("s0");
    const picked = new Set<string>();
    for (let rnd = 0; rnd < 24; rnd++) {
      const r = await pool.acquire({ leaseId: `p${rnd}`, fp: "sub", rnd });
      expect(subset).toContain(r.host);
      picked.add(r.host!);
      await pool.release(`p${rnd}`);
    }
    expect([...picked].sort()).toEqual([...subset].sort());
  });

  it("scan path: walks past many lighter non-candidates and splits ties among candidates by rnd", async () => {
    const pool = new Pool(redis);
    const others = hostList(40, 10);
    const candidates = hostList(3, 99); // sort after every "10.*" host: the scan crosses 3 windows
    await pool.acquire({ leaseId: "seed", fp: "all", hosts: [...others, ...candidates] });
    await pool.release("seed");
    for (let i = 0; i < 6; i++) await pool.acquire({ leaseId: `base${i}`, fp: "sub", hosts: candidates, rnd: i });
    const loads = await pool.loads();
    for (const h of candidates) expect(loads.get(h)).toBe(2);
    for (const h of others) expect(loads.get(h)).toBe(0);

    const picked = new Map<string, number>();
    for (let rnd = 0; rnd < 30; rnd++) {
      const r = await pool.acquire({ leaseId: `p${rnd}`, fp: "sub", rnd });
      expect(r).toMatchObject({ status: "OK", load: 2 });
      expect(candidates).toContain(r.host);
      picked.set(r.host!, (picked.get(r.host!) ?? 0) + 1);
      await pool.release(`p${rnd}`);
    }
    expect(picked.size).toBe(3);
  });

  it("rejects a host count that does not match the hosts sent, writing nothing", async () => {
    const pool = new Pool(redis);
    await expect(
      redis.eval((await import("./pool.js")).SCRIPTS.acquire.text, 5, ...pool.keys(), "l", 1, 1000, 1000, 0, 0, 0, 2, "h1:80"),
    ).rejects.toThrow(/n = 2 but 1 hosts follow/);
    await expect(pool.acquire({ leaseId: "l", cost: 0, hosts: ["h:1"] })).rejects.toThrow(/cost must be an integer >= 1/);
    await expect(pool.acquire({ leaseId: "", hosts: ["h:1"] })).rejects.toThrow(/lease_id must not be empty/);
    expect(await pool.allKeys()).toEqual([]);
  });
});

describe("least-loaded pick", () => {
  it("always picks a host with the minimum load and reports its load before the increment (weighted costs)", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(5);
    const rand = seededRandom(7);
    await pool.acquire({ leaseId: "first", hosts, cost: 3 });
    for (let i = 0; i < 60; i++) {
      const before = await pool.loads();
      const min = Math.min(...before.values());
      const cost = (rand() % 7) + 1;
      const r = await pool.acquire({ leaseId: `l${i}`, cost, rnd: rand() });
      expect(r.status).toBe("OK");
      expect(before.get(r.host!)).toBe(min);
      expect(r.load).toBe(min);
      expect((await pool.loads()).get(r.host!)).toBe(min + cost);
    }
    await expectLoadMatchesLeases(pool);
  });

  it("breaks ties by rnd: rnd 0..3 over four idle hosts reaches all four", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(4);
    await pool.acquire({ leaseId: "seed", hosts });
    await pool.release("seed");
    const picked: string[] = [];
    for (let rnd = 0; rnd < 4; rnd++) {
      picked.push((await pool.acquire({ leaseId: `t${rnd}`, rnd })).host!);
      await pool.release(`t${rnd}`);
    }
    expect([...picked].sort()).toEqual(hosts);
  });

  it("spreads ties roughly uniformly over random rnd values", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(4);
    await pool.acquire({ leaseId: "seed", hosts });
    await pool.release("seed");
    const rand = seededRandom(12345);
    const counts = new Map<string, number>();
    for (let i = 0; i < 400; i++) {
      const r = await pool.acquire({ leaseId: `u${i}`, rnd: rand() });
      counts.set(r.host!, (counts.get(r.host!) ?? 0) + 1);
      await pool.release(`u${i}`);
    }
    expect([...counts.keys()].sort()).toEqual(hosts);
    for (const n of counts.values()) expect(n).toBeGreaterThan(60); // expected 100 each
  });

  it("gives a tie to the host picked least recently: with any rnd, four idle hosts are visited in turn", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(4);
    await pool.acquire({ leaseId: "seed", hosts });
    await pool.release("seed");
    const picked: string[] = [];
    for (let i = 0; i < 12; i++) {
      picked.push((await pool.acquire({ leaseId: `r${i}`, rnd: 0 })).host!);
      await pool.release(`r${i}`);
    }
    for (let i = 0; i < 12; i += 4) expect([...picked.slice(i, i + 4)].sort()).toEqual(hosts);
    // Each round in the first round's order: the least recent goes first.
    expect(picked.slice(4, 8)).toEqual(picked.slice(0, 4));
  });

  it("in a level longer than its window (40 idle hosts, 16 read per pick), 40 picks reach nearly every host", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(40);
    await pool.acquire({ leaseId: "seed", hosts });
    await pool.release("seed");
    const rand = seededRandom(99);
    const picked = new Set<string>();
    for (let i = 0; i < 40; i++) {
      picked.add((await pool.acquire({ leaseId: `w${i}`, rnd: rand() })).host!);
      await pool.release(`w${i}`);
    }
    // Uniform draws would reach ~25 of 40 (40 x (1 - (39/40)^40)).
    expect(picked.size).toBeGreaterThanOrEqual(34);
  });

  it("counts a retried acquire of the same lease id once", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(3);
    const first = await pool.acquire({ leaseId: "dup", hosts, cost: 4 });
    const again = await pool.acquire({ leaseId: "dup", rnd: 2, cost: 4 });
    expect(again).toEqual({ status: "OK", host: first.host, load: 4 });
    expect(await pool.leaseIds()).toEqual(["dup"]);
    expect([...(await pool.loads()).values()].reduce((a, b) => a + b, 0)).toBe(4);
  });
});

/** Calls per command (lowercase name) since the server started or was reset (INFO commandstats). */
async function commandCalls(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const m of (await redis.info("commandstats")).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out.set(m[1], Number(m[2]));
  return out;
}

/**
 * A busy fleet: `fleet` candidates (fp "cand") each holding one lease (load 1), and `gone` hosts
 * that left the candidate set (in load at 0, as an unhealthy or scaled-down pod stays for up to
 * hostStaleMs because another gateway's set may still hold it).
 */
async function busyFleetAboveGoneHosts(fleet: number, gone: number): Promise<{ pool: Pool; candidates: string[]; goneHosts: string[] }> {
  const pool = new Pool(redis);
  const candidates = hostList(fleet, 10);
  const goneHosts = hostList(gone, 20);
  await pool.sync([...candidates, ...goneHosts], { fp: "all" });
  await pool.sync(candidates, { fp: "cand" });
  const rand = seededRandom(fleet + gone);
  for (let i = 0; i < fleet; i++) await pool.acquire({ leaseId: `busy${i}`, fp: "cand", rnd: rand(), hostStaleMs: 0 });
  const loads = await pool.loads();
  for (const h of candidates) expect(loads.get(h)).toBe(1);
  for (const h of goneHosts) expect(loads.get(h)).toBe(0);
  return { pool, candidates, goneHosts };
}

describe("hosts that left the candidate set, below a busy fleet", () => {
  it("300 candidates at load 1 above one host at 0: each pick draws within the level, never scores the set directly, and stays uniform", async () => {
    const { pool, candidates } = await busyFleetAboveGoneHosts(300, 1);
    const before = await commandCalls();
    const rand = seededRandom(2024);
    const counts = new Map<string, number>();
    const picks = 3000;
    for (let i = 0; i < picks; i++) {
      const r = await pool.acquire({ leaseId: `p${i}`, fp: "cand", rnd: rand(), hostStaleMs: 0 });
      expect(r).toMatchObject({ status: "OK", load: 1 });
      counts.set(r.host!, (counts.get(r.host!) ?? 0) + 1);
      expect(await pool.release(`p${i}`)).toBe(1);
    }
    const after = await commandCalls();
    const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    // The old scan collected every tie: past 256 members it scored the candidate set directly on
    // every call (SCARD, then SMEMBERS + ZMSCORE of all 300; SRANDMEMBER 500 + ZMSCORE 500 of a
    // larger set); direct scoring always starts with SCARD, and no other step runs these commands.
    // (ZMSCORE also reads the seen scores of a tie window: least_recent.)
    for (const name of ["srandmember", "smembers", "scard"]) expect({ name, calls: delta(name) }).toEqual({ name, calls: 0 });
    // Bounded work: ~10 Redis calls per pick, O(log N) each (the old walk checked 256 members).
    const pickCalls = ["zrange", "zcount", "sismember", "smismember", "exists"].reduce((n, c) => n + delta(c), 0);
    expect(pickCalls / picks).toBeLessThan(12);
    // Only candidates, and uniform among them: chi-square over 300 hosts (299 degrees of freedom,
    // mean 299, sd 24.5; the draws are deterministic for the seed).
    for (const h of counts.keys()) expect(candidates).toContain(h);
    const expected = picks / candidates.length;
    const chi2 = candidates.reduce((sum, h) => sum + ((counts.get(h) ?? 0) - expected) ** 2 / expected, 0);
    expect(chi2).toBeLessThan(420);
    expect(counts.size).toBeGreaterThan(290);
    await expectLoadMatchesLeases(pool);
  });

  it("100 hosts at 0 below 300 candidates at 1: the scan passes them a window at a time and lands on a candidate without scoring the set", async () => {
    const { pool, candidates } = await busyFleetAboveGoneHosts(300, 100);
    const before = await commandCalls();
    const rand = seededRandom(77);
    const picked = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const r = await pool.acquire({ leaseId: `q${i}`, fp: "cand", rnd: rand(), hostStaleMs: 0 });
      expect(r).toMatchObject({ status: "OK", load: 1 });
      expect(candidates).toContain(r.host);
      picked.add(r.host!);
      await pool.release(`q${i}`);
    }
    const after = await commandCalls();
    const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    for (const name of ["srandmember", "smembers", "scard"]) expect({ name, calls: delta(name) }).toEqual({ name, calls: 0 });
    // The scan passes the 100 with one SMISMEMBER per window of 16 (7 windows), not one
    // SISMEMBER each: ~26 Redis calls per pick.
    const pickCalls = ["zrange", "zcount", "sismember", "smismember", "exists"].reduce((n, c) => n + delta(c), 0);
    expect(pickCalls / 200).toBeLessThan(40);
    expect(picked.size).toBeGreaterThan(120); // 200 uniform draws over 300 hosts: 146 distinct expected
  });

  it("few candidates in a long level: the draws miss, the scan collects the level's candidates and splits them by rnd", async () => {
    const pool = new Pool(redis);
    const lighter = hostList(5, 5); // at 0, below everything
    const crowd = hostList(60, 20); // non-candidates at 1
    const candidates = ["10.0.0.1:9000", "30.0.0.1:9000"]; // at 1: the first and the last member of the level
    await pool.sync([...lighter, ...crowd, ...candidates], { fp: "all" });
    await pool.sync(candidates, { fp: "cand" });
    await redis.zadd(pool.loadKey, ...[...crowd, ...candidates].flatMap((h) => [1, h]));
    const picked = new Map<string, number>();
    for (let rnd = 0; rnd < 60; rnd++) {
      const r = await pool.acquire({ leaseId: `r${rnd}`, fp: "cand", rnd, hostStaleMs: 0 });
      expect(r).toMatchObject({ status: "OK", load: 1 });
      expect(candidates).toContain(r.host);
      picked.set(r.host!, (picked.get(r.host!) ?? 0) + 1);
      await pool.release(`r${rnd}`);
    }
    for (const h of candidates) expect(picked.get(h) ?? 0).toBeGreaterThan(15); // 30 expected each
  });
});

describe("limit (load shedding)", () => {
  it("sheds once the least-loaded host would exceed the limit, and writes nothing", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(2);
    for (let i = 0; i < 4; i++) {
      expect((await pool.acquireWithSync({ leaseId: `l${i}`, hosts, limit: 2, rnd: i })).status).toBe("OK");
    }
    const before = await pool.snapshot();
    const shed = await pool.acquire({ leaseId: "l4", limit: 2 });
    expect(shed.status).toBe("SHED");
    expect(hosts).toContain(shed.host);
    expect(shed.load).toBe(2);
    expect(await pool.snapshot()).toEqual(before);
    // Without a limit the same request is admitted.
    expect((await pool.acquire({ leaseId: "l4", limit: 0 })).status).toBe("OK");
  });

  it("weighs the request's cost against the limit (load + cost > limit sheds, = limit admits)", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(1);
    expect(await pool.acquire({ leaseId: "big", hosts, cost: 6, limit: 5 })).toMatchObject({ status: "SHED", load: 0 });
    expect(await pool.leaseIds()).toEqual([]);
    expect(await pool.acquire({ leaseId: "fits", cost: 5, limit: 5 })).toMatchObject({ status: "OK", load: 0 });
    expect(await pool.acquire({ leaseId: "one", cost: 1, limit: 5 })).toMatchObject({ status: "SHED", load: 5 });
  });
});

describe("stale hosts", () => {
  it("drops a host absent from every synced list, and settling its old leases does not recreate it", async () => {
    const pool = new Pool(redis);
    const [a, b, c] = hostList(3);
    const stale = { hostStaleMs: 300 };
    await pool.acquire({ leaseId: "c-release", fp: "onlyC", hosts: [c], ...stale });
    // Wall-clock margins (Redis's own clock): each step below may take ~100 ms on a loaded machine.
    await pool.acquire({ leaseId: "c-expire", fp: "onlyC", leaseTtlMs: 1500, ...stale });
    await pool.acquire({ leaseId: "c-penalty", fp: "onlyC", ...stale });
    await pool.acquire({ leaseId: "a1", fp: "ab", hosts: [a, b], ...stale });
    expect((await pool.loads()).get(c)).toBe(3);

    await sleep(400);
    const beforeA2 = Date.now();
    const r = await pool.acquire({ leaseId: "a2", fp: "ab", ...stale });
    expect(r.status).toBe("OK");
    const loads = await pool.loads();
    expect(loads.has(c)).toBe(false);
    expect(await redis.zscore(pool.seenKey, c)).toBeNull();
    // a and b were stale too, but they are in the caller's set: marked seen, not dropped.
    expect([...loads.keys()].sort()).toEqual([a, b]);
    // seen by a2 (the same machine's clock; a ms of rounding), not left at a1's time
    expect(Number(await redis.zscore(pool.seenKey, a))).toBeGreaterThanOrEqual(beforeA2 - 1);

    // The dropped host's leases remain and settle without resurrecting it.
    expect(await pool.release("c-release")).toBe(1);
    expect(await pool.release("c-penalty", { penaltyCost: 5, penaltyTtlMs: 10_000 })).toBe(1);
    expect(await redis.hexists(pool.leaseKey, "c-penalty#p")).toBe(0);
    expect(await pool.reconcile()).toMatchObject({ settled: 0 }); // c-expire is still live...
    await sleep(1500);
    expect(await pool.reconcile()).toMatchObject({ settled: 1 }); // ...and now settled
    expect((await pool.loads()).has(c)).toBe(false);
    expect(await pool.leaseIds()).toEqual(["a1", "a2"]);
  });

  it("a host with nothing leased that no list named for two candidate-set lifetimes goes before host_stale_ms; one with a lease stays", async () => {
    const pool = new Pool(redis);
    const [a, b, c, d] = hostList(4);
    // candTtlMs 400: "cd" must outlive the next call even on a loaded machine.
    const o = { hostStaleMs: 3_600_000, candTtlMs: 400 };
    await pool.acquire({ leaseId: "c1", fp: "cd", hosts: [c, d], rnd: 0, ...o }); // d is the least loaded after this
    const first = await pool.acquire({ leaseId: "x", fp: "cd", rnd: 1, ...o });
    await pool.release("x");
    expect([c, d]).toContain(first.host);
    await pool.acquire({ leaseId: "a1", fp: "ab", hosts: [a, b], ...o });
    await sleep(1000); // c and d: named by no list for 2 x 400 ms (the pods were replaced)
    expect((await pool.acquire({ leaseId: "a2", fp: "ab", hosts: [a, b], ...o })).status).toBe("OK");
    const loads = await pool.loads();
    const leased = (await pool.leaseIds()).includes("c1") ? (await redis.hget(pool.leaseKey, "c1"))!.split(" ")[0] : "";
    const idle = [c, d].filter((h) => h !== leased);
    for (const h of idle) expect(loads.has(h), `${h} at load 0`).toBe(false);
    expect(loads.get(leased)).toBe(1); // leased: stays for the host_stale_ms rule
    expect(loads.has(a) && loads.has(b)).toBe(true);
    await pool.release("c1");
  });

  it("1,000 pods replaced: the old ones at load 0 leave the pool within a few hundred acquires, not host_stale_ms", async () => {
    const pool = new Pool(redis);
    const old = hostList(1000, 30);
    const fleet = hostList(50);
    // candTtlMs 400: "new" (re-sent every 8th call) must not lapse between calls on a loaded machine.
    const o = { hostStaleMs: 3_600_000, candTtlMs: 400 };
    await pool.sync(old, { fp: "old", candTtlMs: 400 });
    await pool.sync(fleet, { fp: "new", candTtlMs: 400 });
    await sleep(1000);
    let calls = 0;
    for (; calls < 2000 && (await redis.zcard(pool.loadKey)) > fleet.length; calls++) {
      expect((await pool.acquire({ leaseId: `r${calls}`, fp: "new", hosts: calls % 8 === 0 ? fleet : undefined, rnd: 8 * (calls * 7919 + 1), ...o })).status).toBe("OK");
    }
    expect(await redis.zcard(pool.loadKey)).toBe(fleet.length);
    expect(calls).toBeLessThan(800);
  });

  it("host_stale_ms = 0 never drops hosts", async () => {
    const pool = new Pool(redis);
    const [a, b] = hostList(2);
    await pool.acquire({ leaseId: "x", fp: "onlyA", hosts: [a], hostStaleMs: 0 });
    await pool.acquire({ leaseId: "y", fp: "onlyB", hosts: [b], hostStaleMs: 0 });
    await sleep(30);
    await pool.acquire({ leaseId: "z", fp: "onlyB", hostStaleMs: 0 });
    expect([...(await pool.loads()).keys()].sort()).toEqual([a, b]);
  });
});
