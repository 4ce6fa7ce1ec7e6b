// The plugin's side of issue 11 items 1, 2 and 12's migration, through the host facade: the healer
// runs every tick and repeats while a backlog remains; an acquire that got no reply is released
// with a tombstone once Redis answers again, so it cannot leave a phantom lease; every acquire
// carries a deadline in Redis's clock once a probe taught it; `compat: true` keeps Higress's
// counter hash with real Redis.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { CLUSTER, advanceWithIo, glrConfig, host, hosts, postChat } from "./harness.js";
import type { TestHost } from "../../host-test/facade/index.js";
import { Pool, hostList } from "../lua/pool.js";

const NS = `{llmlb:llm:${CLUSTER}}`;
let redis: RedisFixture;
let client: Redis;
let h: TestHost | null = null;

const suite = useRedisSuite();
beforeAll(() => { redis = suite.server; client = suite.redis; });
afterEach(async () => { h?.close(); h = null; await client.flushall(); });

async function totalLoad(): Promise<number> {
  const flat = await client.zrange(`${NS}:load`, 0, -1, "WITHSCORES");
  let sum = 0;
  for (let i = 1; i < flat.length; i += 2) sum += Number(flat[i]);
  return sum;
}

describe("healer", () => {
  it("a backlog of 3,000 dead leases on 3 hosts is settled by ticks alone, in bounded calls", { timeout: 30_000 }, async () => {
    // A dead gateway's leases, written straight through the scripts (same pool as the plugin's).
    const pool = new Pool(client, "llm", CLUSTER);
    const addrs = hosts(3).map((x) => x.address);
    await pool.acquire({ leaseId: "dead-0", hosts: addrs, leaseTtlMs: 4_000, hostStaleMs: 3_600_000 });
    const taken = await Promise.all(Array.from({ length: 2_999 }, (_, i) => pool.acquire({ leaseId: `dead-${i + 1}`, leaseTtlMs: 4_000, rnd: i, hostStaleMs: 3_600_000 })));
    expect(taken.filter((r) => r.status !== "OK")).toEqual([]);
    const lastTaken = Date.now();
    expect(await totalLoad()).toBe(3_000);
    h = await host({ configuration: glrConfig({ leaseTTL: 2 }), redis: { url: redis.url }, clusters: { [CLUSTER]: hosts(3) } });
    const first = postChat(h).s; // the VM learns the pool (before the dead leases expire)
    await h.redisIdle();
    first.sendResponseHeaders({ ":status": "200" }, true);
    first.complete();
    await h.redisIdle();
    expect(await totalLoad()).toBe(3_000);
    await new Promise((r) => setTimeout(r, lastTaken + 4_300 - Date.now()));
    await advanceWithIo(h, 1000); // one tick: the healer runs (and repeats while more = 1)
    expect(await totalLoad()).toBe(0);
    await advanceWithIo(h, 2000);
    expect((await pool.leaseIds()).length).toBe(0); // the records are collected too
  });
});

describe("acquires without a reply", () => {
  it("are released with a tombstone once Redis answers again, so a late run writes nothing", async () => {
    h = await host({ configuration: glrConfig({ breakerFailures: 1, breakerOpenSeconds: 60 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const { s } = postChat(h);
    const acquire = h.redisCalls[0];
    const leaseId = /\r\n\$\d+\r\n([^\r]+:[0-9a-z]+)\r\n/.exec(acquire.text.split(NS + ":seen")[1])![1];
    acquire.fail(); // no reply: the request goes on locally
    expect(s.forwarded!.upstream.via).toBe("override");
    h.advance(1000); // tick: only the probe goes out while the breaker is open
    expect(h.redisCalls.map((c) => c.text.includes("TIME"))).toEqual([true]);
    h.redisCalls[0].reply("*2\r\n$10\r\n1795000000\r\n$1\r\n0\r\n");
    h.advance(1000); // breaker closed: the given-up id goes out as a release with a tombstone
    const release = h.redisCalls.find((c) => c.text.includes(leaseId));
    expect(release).toBeDefined();
    expect(release!.text).toMatch(new RegExp(`\\r\\n${leaseId.replace(/[:]/g, "\\$&")}\\r\\n\\$1\\r\\n0\\r\\n\\$\\d+\\r\\n\\d+\\r\\n\\$\\d+\\r\\n\\d+\\r\\n\\$5\\r\\n60000\\r\\n$`));
  });
});

describe("compat: true (rolling migration from Higress)", () => {
  it("keeps Higress's counter hash: +1 per pick, -1 at the end of each stream", async () => {
    h = await host({ configuration: glrConfig({ compat: true }), redis: { url: redis.url }, clusters: { [CLUSTER]: hosts(2) } });
    const key = `higress:global_least_request_table:llm:${CLUSTER}`;
    const streams = [postChat(h).s, postChat(h).s, postChat(h).s];
    await h.redisIdle();
    const counts = await client.hgetall(key);
    expect(Object.values(counts).map(Number).reduce((a, b) => a + b, 0)).toBe(3);
    expect(Object.keys(counts).sort()).toEqual(hostList(2).sort());
    for (const s of streams) { s.sendResponseHeaders({ ":status": "200" }, true); s.complete(); }
    await h.redisIdle();
    expect(Object.values(await client.hgetall(key)).map(Number)).toEqual([0, 0]);
    expect(await totalLoad()).toBe(0);
  });
});
