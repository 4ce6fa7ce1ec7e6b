// Benchmark of acquire.lua against a real redis-server: N acquires at 10 / 100 / 1000 hosts,
// next to a baseline that reads every host per request (the anchor plugin's O(hosts) HASH
// design, re-implemented here from its description). Prints one table; the numbers are recorded
// by hand, nothing here asserts on speed.
// Usage: npx tsx bench/lua-pick.ts [acquires per size, default 2000]   (REDIS_URL to reuse a server)
// Failure: throws if redis-server cannot start or a script returns an error.
import { pathToFileURL } from "node:url";
import { Redis } from "ioredis";
import { startRedis } from "../test/helpers/redis.js";
import { Pool, hostList, seededRandom } from "../test/lua/pool.js";

const SIZES = [10, 100, 1000];
const CONCURRENCY = 16; // connections for the throughput column
const WARMUP = 300;

// Baseline: HGET every candidate, pick the minimum, HINCRBY it (one HASH, no leases).
const HASH_SCAN_PICK = `
local best, best_load = nil, nil
for i = 1, #ARGV do
  local load = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0')
  if best_load == nil or load < best_load then best, best_load = ARGV[i], load end
end
redis.call('HINCRBY', KEYS[1], best, 1)
return best`;

export interface LuaPickRow {
  hosts: number;
  design: string;
  acquires: number;
  meanUs: number;
  p99Us: number;
  perSecond: number;
  redisCallsPerAcquire: number;
}

async function scriptCallCount(redis: Redis): Promise<number> {
  // commandstats counts the commands a script issues as well as the EVALSHA itself.
  const info = await redis.info("commandstats");
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) calls += Number(m[1]);
  return calls;
}

async function measure(
  clients: Redis[], hosts: number, design: string, acquires: number, acquireOne: (client: Redis, i: number) => Promise<unknown>,
): Promise<LuaPickRow> {
  const [first] = clients;
  for (let i = 0; i < WARMUP; i++) await acquireOne(first, -1 - i); // script cache, JIT, allocations
  await first.config("RESETSTAT");
  const latencies: number[] = [];
  for (let i = 0; i < acquires; i++) {
    const t0 = process.hrtime.bigint();
    await acquireOne(first, i);
    latencies.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  // -1: the INFO call itself is counted too.
  const redisCallsPerAcquire = ((await scriptCallCount(first)) - 1) / acquires;
  const started = process.hrtime.bigint();
  let next = 0;
  await Promise.all(clients.map(async (client) => {
    while (next < acquires) await acquireOne(client, acquires + next++);
  }));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  return {
    hosts, design, acquires,
    meanUs: latencies.reduce((a, b) => a + b, 0) / latencies.length,
    p99Us: latencies[Math.floor(latencies.length * 0.99)],
    perSecond: acquires / seconds,
    redisCallsPerAcquire,
  };
}

export async function runLuaPickBench(acquires = 2000): Promise<LuaPickRow[]> {
  const server = await startRedis();
  const clients = Array.from({ length: CONCURRENCY }, () => new Redis(server.port, server.host));
  const rows: LuaPickRow[] = [];
  try {
    for (const size of SIZES) {
      const hosts = hostList(size);
      const rand = seededRandom(size);
      const pools = new Map(clients.map((c) => [c, new Pool(c, `bench-${size}`)]));
      await pools.get(clients[0])!.acquire({ leaseId: "sync", hosts });
      // Leases are not released: releases would be counted in the calls column.
      rows.push(await measure(clients, size, "leases (acquire.lua)", acquires, async (client, i) => {
        const r = await pools.get(client)!.acquire({ leaseId: `b${i}`, rnd: rand() });
        if (r.status !== "OK") throw new Error(`acquire returned ${r.status}`);
      }));
      const hashKey = `{llmlb:bench-hash-${size}}:table`;
      rows.push(await measure(clients, size, "hash scan (baseline)", acquires, (client) =>
        client.eval(HASH_SCAN_PICK, 1, hashKey, ...hosts)));
    }
  } finally {
    for (const c of clients) c.disconnect();
    if (server.owned) await server.stop();
  }
  return rows;
}

export function printLuaPickTable(rows: LuaPickRow[]): void {
  console.log("| hosts | design | acquires | mean us (1 conn) | p99 us | acquires/s (16 conns) | Redis calls/acquire |");
  console.log("|---:|---|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(`| ${r.hosts} | ${r.design} | ${r.acquires} | ${r.meanUs.toFixed(0)} | ${r.p99Us.toFixed(0)} | ${r.perSecond.toFixed(0)} | ${r.redisCallsPerAcquire.toFixed(1)} |`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const acquires = Number(process.argv[2] ?? 2000);
  printLuaPickTable(await runLuaPickBench(acquires));
}
