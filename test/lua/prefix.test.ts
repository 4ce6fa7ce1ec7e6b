// prefix.lua against a real redis-server: longest-prefix walk, TTLs, unhealthy holders (anchor
// defect 5), the load gate and takeover (defect 7), shedding, the acquire contract it shares,
// and Redis Cluster compatibility of namespaced keys (one slot, accepted by a cluster node).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { startClusterNode, type ClusterNode } from "../prefix/cluster-node.js";
import { Pool, SCRIPTS, hostList } from "./pool.js";
import { expectLoadMatchesLeases } from "./invariants.js";

interface PrefixCall {
  leaseId: string;
  levels: string[];
  hosts?: string[];
  fp?: string;
  cost?: number;
  limit?: number;
  rnd?: number;
  keyTtlS?: number;
  gateAbs?: number;
  gateRel?: number;
  gateCap?: number;
}

interface PrefixResult {
  status: string;
  host?: string;
  load?: number;
  reason?: string;
  depth?: number;
}

async function evalPrefix(redis: Redis, keys: string[], args: Array<string | number>): Promise<unknown> {
  const script = SCRIPTS.prefix;
  try {
    return await redis.evalsha(script.sha1, keys.length, ...keys, ...args);
  } catch (err) {
    if (!String((err as Error).message).startsWith("NOSCRIPT")) throw err;
    return redis.eval(script.text, keys.length, ...keys, ...args);
  }
}

class PrefixPool extends Pool {
  /** A namespaced level key, as the plugin builds it. */
  level(name: string, model = "m"): string { return `${this.ns}:p:${model}:${name}`; }

  async prefix(o: PrefixCall): Promise<PrefixResult> {
    const hosts = o.hosts ?? [];
    const reply = (await evalPrefix(this.redis, [...this.keys(o.fp), ...o.levels], [
      o.leaseId, o.cost ?? 1, 60_000, 60_000, o.limit ?? 0, o.rnd ?? 0, 600_000,
      o.keyTtlS ?? 1800, o.gateAbs ?? 8, o.gateRel ?? 1.5, o.gateCap ?? 0, hosts.length, ...hosts,
    ])) as string[];
    const [status, host, load, reason, depth] = reply;
    const r: PrefixResult = { status };
    if (host !== undefined) r.host = host;
    if (load !== undefined) r.load = Number(load);
    if (reason !== undefined) r.reason = reason;
    if (depth !== undefined) r.depth = Number(depth);
    return r;
  }

  /** Puts `count` leases on `host` through acquire.lua with a one-host candidate set. */
  async loadHost(host: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const r = await this.acquire({ leaseId: `load-${host}-${i}-${Math.random()}`, fp: `only-${host}`, hosts: [host] });
      expect(r.status).toBe("OK");
    }
  }

  async holders(levels: string[]): Promise<Array<string | null>> {
    return Promise.all(levels.map((k) => this.redis.get(k)));
  }
}

const suite = useRedisSuite();
let server: RedisFixture;
let redis: Redis;
beforeAll(() => { ({ server, redis } = suite); });

describe("longest-prefix walk", () => {
  it("a miss picks the least-loaded host and writes every level to it with the key TTL", async () => {
    const pool = new PrefixPool(redis);
    const [a, b] = hostList(2);
    await pool.loadHost(a, 1);
    const levels = [pool.level("L1"), pool.level("L2")];
    const r = await pool.prefix({ leaseId: "r1", levels, hosts: [a, b], keyTtlS: 120 });
    expect(r).toEqual({ status: "OK", host: b, load: 0, reason: "prefix_miss", depth: 0 });
    expect(await pool.holders(levels)).toEqual([b, b]);
    for (const k of levels) {
      const ttl = await redis.ttl(k);
      expect(ttl).toBeGreaterThan(110);
      expect(ttl).toBeLessThanOrEqual(120);
    }
    await expectLoadMatchesLeases(pool);
  });

  it("a longer conversation hits its prefix's host, reports the depth and extends the path", async () => {
    const pool = new PrefixPool(redis);
    const [a, b, c] = hostList(3);
    const l = [pool.level("L1"), pool.level("L2"), pool.level("L3")];
    const first = await pool.prefix({ leaseId: "r1", levels: l.slice(0, 1), hosts: [a, b, c], rnd: 1 });
    expect(first.reason).toBe("prefix_miss");
    const second = await pool.prefix({ leaseId: "r2", levels: l.slice(0, 2), rnd: 2 });
    expect(second).toEqual({ status: "OK", host: first.host, load: 1, reason: "prefix_hit", depth: 1 });
    const third = await pool.prefix({ leaseId: "r3", levels: l, rnd: 3 });
    expect(third).toEqual({ status: "OK", host: first.host, load: 2, reason: "prefix_hit", depth: 2 });
    expect(await pool.holders(l)).toEqual([first.host, first.host, first.host]);
    // The same full path again matches every level.
    expect((await pool.prefix({ leaseId: "r4", levels: l, rnd: 4 })).depth).toBe(3);
    await expectLoadMatchesLeases(pool);
  });

  it("refreshes the TTL of the levels it matched", async () => {
    const pool = new PrefixPool(redis);
    const hosts = hostList(2);
    const l = [pool.level("L1"), pool.level("L2")];
    await pool.prefix({ leaseId: "r1", levels: l, hosts, keyTtlS: 300 });
    await redis.expire(l[0], 5);
    await redis.expire(l[1], 5);
    const r = await pool.prefix({ leaseId: "r2", levels: l.slice(0, 1), keyTtlS: 300 });
    expect(r.reason).toBe("prefix_hit");
    expect(await redis.ttl(l[0])).toBeGreaterThan(290);
    expect(await redis.ttl(l[1])).toBeLessThanOrEqual(5); // not part of this request: untouched
  });

  it("the deepest matching level wins when levels point at different hosts", async () => {
    const pool = new PrefixPool(redis);
    const [a, b] = hostList(2);
    const l = [pool.level("L1"), pool.level("L2")];
    await redis.set(l[0], a);
    await redis.set(l[1], b);
    const r = await pool.prefix({ leaseId: "r1", levels: l, hosts: [a, b] });
    expect(r).toMatchObject({ host: b, reason: "prefix_hit", depth: 2 });
    expect(await pool.holders(l)).toEqual([a, b]); // a hit leaves matched levels as they were
  });

  it("an unhealthy holder stops the walk; the path is rewritten from there without corrupting keys", async () => {
    const pool = new PrefixPool(redis);
    const [a, b, c] = hostList(3);
    const l = [pool.level("L1"), pool.level("L2"), pool.level("L3")];
    await redis.set(l[0], a);
    await redis.set(l[1], c); // c is no longer a candidate
    await redis.set(l[2], b); // derived from the L2 prefix: must not be trusted past the break
    const r = await pool.prefix({ leaseId: "r1", levels: l, hosts: [a, b] });
    expect(r).toMatchObject({ status: "OK", host: a, reason: "prefix_hit", depth: 1 });
    expect(await pool.holders(l)).toEqual([a, a, a]);
    // Only the request's own keys were written: no stray key (Higress wrote "H1 xor H1").
    const prefixKeys = (await pool.allKeys()).filter((k) => k.includes(":p:"));
    expect(prefixKeys.sort()).toEqual([...l].sort());
    // The next turn of the conversation now matches the whole rewritten path.
    expect((await pool.prefix({ leaseId: "r2", levels: l })).depth).toBe(3);
  });

  it("a first level held by a non-candidate is a miss", async () => {
    const pool = new PrefixPool(redis);
    const [a, b, gone] = hostList(3);
    const l = [pool.level("L1")];
    await redis.set(l[0], gone);
    const r = await pool.prefix({ leaseId: "r1", levels: l, hosts: [a, b] });
    expect(r.reason).toBe("prefix_miss");
    expect([a, b]).toContain(r.host);
    expect(await redis.get(l[0])).toBe(r.host);
  });

  it("reads bare Higress-style keys too (compat mode)", async () => {
    const pool = new PrefixPool(redis);
    const [a, b] = hostList(2);
    const bare = `${"AB".repeat(19)}${process.pid.toString(16).padStart(2, "0").slice(-2)}`.toUpperCase();
    await redis.set(bare, b);
    const r = await pool.prefix({ leaseId: "r1", levels: [bare], hosts: [a, b] });
    expect(r).toMatchObject({ host: b, reason: "prefix_hit", depth: 1 });
    await redis.del(bare);
  });
});

describe("load gate", () => {
  it("keeps the affinity host while it is within min + gate_abs", async () => {
    const pool = new PrefixPool(redis);
    const [a, b] = hostList(2);
    await pool.loadHost(a, 5);
    const l = [pool.level("L1")];
    await redis.set(l[0], a);
    const r = await pool.prefix({ leaseId: "r1", levels: l, hosts: [a, b], gateAbs: 8, gateRel: 1.5 });
    expect(r).toMatchObject({ host: a, load: 5, reason: "prefix_hit" });
  });

  it("spills to the least-loaded host when imbalanced, which then takes over the whole path", async () => {
    const pool = new PrefixPool(redis);
    const [a, b] = hostList(2);
    await pool.loadHost(a, 10);
    const l = [pool.level("L1"), pool.level("L2"), pool.level("L3")];
    await redis.set(l[0], a);
    await redis.set(l[1], a);
    const r = await pool.prefix({ leaseId: "r1", levels: l, hosts: [a, b], gateAbs: 8, gateRel: 1.5 });
    expect(r).toEqual({ status: "OK", host: b, load: 0, reason: "prefix_spill", depth: 2 });
    expect(await pool.holders(l)).toEqual([b, b, b]);
    // The conversation now follows b.
    expect(await pool.prefix({ leaseId: "r2", levels: l })).toMatchObject({ host: b, reason: "prefix_hit", depth: 3 });
    await expectLoadMatchesLeases(pool);
  });

  it("needs both the absolute and the relative margin", async () => {
    const pool = new PrefixPool(redis);
    const [a, b] = hostList(2);
    await pool.loadHost(a, 20);
    await pool.loadHost(b, 14);
    const l = [pool.level("L1")];
    await redis.set(l[0], a);
    // 20 > 14 + 2 but 20 <= 1.5 * 14: stay.
    expect(await pool.prefix({ leaseId: "r1", levels: l, hosts: [a, b], gateAbs: 2, gateRel: 1.5 })).toMatchObject({ host: a, reason: "prefix_hit" });
    // 21 > 1.4 * 14 = 19.6 and 21 > 16: spill.
    expect(await pool.prefix({ leaseId: "r2", levels: l, gateAbs: 2, gateRel: 1.4 })).toMatchObject({ host: b, reason: "prefix_spill" });
  });

  it("spills at gate_cap even when the margins are not reached", async () => {
    const pool = new PrefixPool(redis);
    const [a, b] = hostList(2);
    await pool.loadHost(a, 3);
    await pool.loadHost(b, 2);
    const l = [pool.level("L1")];
    await redis.set(l[0], a);
    expect(await pool.prefix({ leaseId: "r1", levels: l, hosts: [a, b], gateAbs: 100, gateCap: 4 })).toMatchObject({ host: a, reason: "prefix_hit" });
    expect(await pool.prefix({ leaseId: "r2", levels: l, gateAbs: 100, gateCap: 4 })).toMatchObject({ host: b, reason: "prefix_spill" });
  });

  it("spills when only the least-loaded host fits under the limit", async () => {
    const pool = new PrefixPool(redis);
    const [a, b] = hostList(2);
    await pool.loadHost(a, 5);
    await pool.loadHost(b, 3);
    const l = [pool.level("L1")];
    await redis.set(l[0], a);
    expect(await pool.prefix({ leaseId: "r1", levels: l, hosts: [a, b], gateAbs: 100, limit: 5 })).toMatchObject({ host: b, load: 3, reason: "prefix_spill" });
  });

  it("a hot prefix spreads instead of piling onto one host", async () => {
    const pool = new PrefixPool(redis);
    const hosts = hostList(4);
    const l = [pool.level("hot")];
    const picked = new Map<string, number>();
    for (let i = 0; i < 40; i++) {
      const r = await pool.prefix({ leaseId: `h${i}`, levels: l, hosts: i === 0 ? hosts : [], rnd: i * 7919, gateAbs: 2, gateRel: 1.5 });
      expect(r.status).toBe("OK");
      picked.set(r.host!, (picked.get(r.host!) ?? 0) + 1);
    }
    expect(picked.size).toBe(4);
    const loads = [...(await pool.loads()).values()];
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(3);
    await expectLoadMatchesLeases(pool);
  });
});

describe("shared acquire contract", () => {
  it("sheds when even the chosen host is at the limit, writing no lease and no level", async () => {
    const pool = new PrefixPool(redis);
    const [a, b] = hostList(2);
    await pool.loadHost(a, 2);
    await pool.loadHost(b, 2);
    const l = [pool.level("L1"), pool.level("L2")];
    await redis.set(l[0], a);
    const r = await pool.prefix({ leaseId: "r1", levels: l, hosts: [a, b], limit: 2 });
    expect(r).toEqual({ status: "SHED", host: a, load: 2 });
    expect(await redis.hget(pool.leaseKey, "r1")).toBeNull();
    expect(await redis.exists(l[1])).toBe(0);
  });

  it("asks for the candidate list when the set is missing, and writes nothing", async () => {
    const pool = new PrefixPool(redis);
    const l = [pool.level("L1")];
    expect(await pool.prefix({ leaseId: "r1", levels: l })).toEqual({ status: "NEED_CANDIDATES" });
    expect(await pool.allKeys()).toEqual([]);
  });

  it("a retried call returns its lease without counting it twice", async () => {
    const pool = new PrefixPool(redis);
    const hosts = hostList(2);
    const l = [pool.level("L1")];
    const first = await pool.prefix({ leaseId: "r1", levels: l, hosts });
    const again = await pool.prefix({ leaseId: "r1", levels: l });
    expect(again.status).toBe("OK");
    expect(again.host).toBe(first.host);
    expect((await pool.loads()).get(first.host!)).toBe(1);
  });

  it("works with no level keys at all (plain least request)", async () => {
    const pool = new PrefixPool(redis);
    const hosts = hostList(2);
    expect(await pool.prefix({ leaseId: "r1", levels: [], hosts })).toMatchObject({ status: "OK", reason: "prefix_miss", depth: 0 });
  });

  it("keeps a key for the longest redisKeyTTL the configuration accepts (a year), and refuses longer", async () => {
    const pool = new PrefixPool(redis);
    const hosts = hostList(2);
    const l = [pool.level("L1")];
    expect(await pool.prefix({ leaseId: "r1", levels: l, hosts, keyTtlS: 31536000 })).toMatchObject({ status: "OK" });
    expect(await redis.ttl(l[0])).toBeGreaterThan(31535000);
    await expect(pool.prefix({ leaseId: "r2", levels: l, hosts, keyTtlS: 31536001 })).rejects.toThrow(/key_ttl_s must be <= 31536000/);
  });

  it("a busy fleet above a host that left the set: misses and spills land on a candidate at the fleet's load, drawn within its level", async () => {
    const pool = new PrefixPool(redis);
    const fleet = hostList(300);
    await pool.sync([...fleet, ...hostList(1, 20)], { fp: "all" }); // 20.0.0.1 stays in load at 0
    await pool.sync(fleet);
    for (let i = 0; i < fleet.length; i++) expect((await pool.acquire({ leaseId: `busy${i}`, rnd: i * 7919 })).status).toBe("OK");
    const [a] = fleet;
    await pool.loadHost(a, 12);
    const l = [pool.level("hot")];
    await redis.set(l[0], a);
    const calls = async (name: string) => Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, "m").exec(await redis.info("commandstats"))?.[1] ?? 0);
    const [srand, scard] = [await calls("srandmember"), await calls("scard")];
    for (let i = 0; i < 20; i++) {
      const r = await pool.prefix({ leaseId: `m${i}`, levels: [pool.level(`miss${i}`)], rnd: i * 104729 });
      expect(r).toMatchObject({ status: "OK", load: 1, reason: "prefix_miss" });
      expect(fleet).toContain(r.host);
    }
    const r = await pool.prefix({ leaseId: "spill", levels: l, rnd: 3, gateAbs: 8 });
    expect(r).toMatchObject({ status: "OK", load: 1, reason: "prefix_spill" });
    expect(fleet).toContain(r.host);
    // The old scan collected the 300 ties: past 256 members, SCARD, SMEMBERS + ZMSCORE of the set on every pick.
    expect([await calls("srandmember") - srand, await calls("scard") - scard]).toEqual([0, 0]);
    await expectLoadMatchesLeases(pool);
  });

  it("rejects malformed arguments before writing anything", async () => {
    const pool = new PrefixPool(redis);
    const hosts = hostList(2);
    const l = [pool.level("L1")];
    await expect(pool.prefix({ leaseId: "r1", levels: l, hosts, keyTtlS: 0 })).rejects.toThrow(/key_ttl_s/);
    await expect(pool.prefix({ leaseId: "r1", levels: l, hosts, gateRel: -1 })).rejects.toThrow(/gate_rel/);
    await expect(evalPrefix(redis, pool.keys(), ["r1", 1, 1000, 1000, 0, 0, 0, 60, 8, 1.5, 0, 3, hosts[0]]))
      .rejects.toThrow(/n = 3 but 1 hosts follow/);
    expect(await pool.allKeys()).toEqual([]);
  });
});

describe("Redis Cluster", () => {
  let node: ClusterNode;
  beforeAll(async () => { node = await startClusterNode(); });
  afterAll(async () => { await node?.stop(); });

  it("namespaced keys all hash to the pool's slot, and a cluster node runs the script", async () => {
    const pool = new PrefixPool(node.redis, "route-a", "outbound|8000||vllm.default.svc.cluster.local");
    const levels = [pool.level("5E0C2A11B6A3F4E8D6C7B8A9F0E1D2C3B4A59687"), pool.level("00FF", "other-model")];
    const keys = [...pool.keys("fp1"), ...levels];
    const slots = await Promise.all(keys.map((k) => node.redis.call("CLUSTER", "KEYSLOT", k)));
    expect(new Set(slots).size).toBe(1);
    const r = await pool.prefix({ leaseId: "c1", levels, fp: "fp1", hosts: hostList(2) });
    expect(r.status).toBe("OK");
  });

  it("bare compat keys span slots, which a cluster refuses (compat needs a non-cluster Redis)", async () => {
    const pool = new PrefixPool(node.redis, "route-b");
    const bare = ["DC6E080F28569CE3D07E77FC3A00DF1CCD9DA20E", "62EE2EB1856F804718FE25AA35DBBAEB27D78035"];
    await expect(pool.prefix({ leaseId: "c2", levels: bare, hosts: hostList(2) })).rejects.toThrow(/CROSSSLOT|slot/i);
  });
});
