// Benchmark of the lease scripts against a real redis-server, next to the two reference designs
// measured in the same run (issue 14): Photoroom's two-line ZSET script (the floor: ZRANGE 0 0 +
// ZINCRBY) and Higress's per-host scan (HGET every healthy host, HINCRBY, HMGET of every host
// for its detail log, on by default; shared/reference/higress-parity.md section 4), both written
// here from their descriptions. For every design and size: the script's time inside Redis (mean
// and p99 from Redis's own per-command latency histogram, INFO latencystats), Redis CPU per call
// (INFO cpu, so other processes on the machine do not inflate it) and the capacity of one Redis
// core it implies, Redis calls per script, and the throughput reached with 16 connections; each
// the best of 5 batches (see measure()).
// Our release and renew are measured the same way, and acquire and release again as FCALL of the
// function library (how the plugin calls them where Redis has functions). Nothing here asserts on speed.
// Usage: npx tsx bench/lua-pick.ts [calls per row, default 20000] [sizes, default 10,100,1000,10000]
//        npx tsx bench/lua-pick.ts worst   (the longest single calls the caps allow)
//        npx tsx bench/lua-pick.ts gone [calls per row, default 4000] [label=<lua dir>...]
//          (acquire on a busy fleet above hosts that left the candidate set: runGoneHostsBench)
// (LLMLB_LUA_DIR=<dir> measures the scripts of another directory, e.g. an earlier commit's lua/).
// Failure: throws if redis-server cannot start or a script returns an error.
import { pathToFileURL } from "node:url";
import { Redis } from "ioredis";
import { startRedis } from "../test/helpers/redis.js";
import { bundleLuaScripts, luaLibrary } from "../scripts/lua-bundle.mjs";
import { LIBRARY, Pool, SCRIPTS, callScriptsVia, hostList, loadLibrary, runScript, seededRandom } from "../test/lua/pool.js";

const SIZES = [10, 100, 1000, 10000];
const CONNECTIONS = 16;
const DEPTH = 4; // calls in flight per connection: keeps Redis busy without a deep queue
const WARMUP = 500;

// Photoroom: pick = lowest score, +1 (their release is ZINCRBY -1 when > 0).
const PHOTOROOM_PICK = `local h = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
redis.call('ZINCRBY', KEYS[1], 1, h)
return h`;

// Higress global_least_request: HGET every healthy host, uniform among minima, HINCRBY, HGET the
// new count, HMGET every host (detail log, default on), GET the last-clean time.
const HIGRESS_PICK = `math.randomseed(tonumber(ARGV[1]))
local best, best_load, hits = nil, nil, 0
for i = 3, #ARGV do
  local load = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0') or 0
  if best_load == nil or load < best_load then best, best_load, hits = ARGV[i], load, 1
  elseif load == best_load then hits = hits + 1; if math.random(hits) == 1 then best = ARGV[i] end end
end
redis.call('HINCRBY', KEYS[1], best, 1)
local count = redis.call('HGET', KEYS[1], best)
if ARGV[2] == '1' then
  local fields = {}
  for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
  redis.call('HMGET', KEYS[1], unpack(fields))
end
redis.call('GET', KEYS[2])
return { best, count }`;

export interface LuaPickRow {
  hosts: number;
  script: string;
  calls: number;
  meanUs: number;
  p99Us: number;
  cpuUs: number;
  coreCapacity: number;
  perSecond: number;
  redisCalls: number;
}

interface Stats { evalUs: number; evalCalls: number; innerCalls: number; p99: number; cpuUs: number }

async function cpuUs(redis: Redis): Promise<number> {
  const info = await redis.info("cpu");
  const user = Number(/used_cpu_user:([\d.]+)/.exec(info)![1]);
  const sys = Number(/used_cpu_sys:([\d.]+)/.exec(info)![1]);
  return (user + sys) * 1e6;
}

async function readStats(redis: Redis, cpuBefore: number): Promise<Stats> {
  const cpu = await cpuUs(redis);
  const commands = await redis.info("commandstats");
  const latency = await redis.info("latencystats");
  let evalUs = 0, evalCalls = 0, innerCalls = 0;
  for (const m of commands.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    const [name, calls, usec] = [m[1], Number(m[2]), Number(m[3])];
    if (name === "evalsha" || name === "eval" || name === "fcall") { evalUs += usec; evalCalls += calls; }
    else if (name !== "info" && !name.startsWith("config")) innerCalls += calls;
  }
  const p99 = Number(/latency_percentiles_usec_(?:evalsha|fcall):[^\n]*p99=([\d.]+)/.exec(latency)?.[1] ?? NaN);
  return { evalUs, evalCalls, innerCalls, p99, cpuUs: cpu - cpuBefore };
}

/** Runs `calls` invocations of one over CONNECTIONS connections, DEPTH in flight each. */
async function drive(clients: Redis[], calls: number, one: (client: Redis, i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(clients.flatMap((client) => Array.from({ length: DEPTH }, async () => {
    while (next < calls) await one(client, next++);
  })));
  return calls / (Number(process.hrtime.bigint() - started) / 1e9);
}

/**
 * Runs `calls` in BATCHES batches and reports the batch with the lowest Redis CPU per call: the
 * machine is shared, and preemption by other processes only ever adds time, so the best batch is
 * the closest to the script's own cost (every design gets the same treatment in the same run).
 */
const BATCHES = 5;
async function measure(clients: Redis[], hosts: number, script: string, calls: number,
  one: (client: Redis, i: number) => Promise<unknown>): Promise<LuaPickRow> {
  const [admin] = clients;
  const per = Math.max(1, Math.floor(calls / BATCHES));
  let best: LuaPickRow | null = null;
  for (let b = 0; b < BATCHES; b++) {
    await admin.config("RESETSTAT");
    const cpuBefore = await cpuUs(admin);
    const perSecond = await drive(clients, per, (client, i) => one(client, b * per + i));
    const s = await readStats(admin, cpuBefore);
    const cpu = s.cpuUs / s.evalCalls;
    const row = {
      hosts, script, calls: per * BATCHES, meanUs: s.evalUs / s.evalCalls, p99Us: s.p99, cpuUs: cpu,
      coreCapacity: 1e6 / cpu, perSecond, redisCalls: s.innerCalls / s.evalCalls,
    };
    if (best === null || row.cpuUs < best.cpuUs) best = row;
  }
  return best!;
}

export async function runLuaPickBench(calls = 20000, sizes = SIZES): Promise<LuaPickRow[]> {
  const server = await startRedis();
  const clients = Array.from({ length: CONNECTIONS }, () => new Redis(server.port, server.host));
  const rows: LuaPickRow[] = [];
  try {
    const [admin] = clients;
    const photoroomSha = (await admin.script("LOAD", PHOTOROOM_PICK)) as string;
    const higressSha = (await admin.script("LOAD", HIGRESS_PICK)) as string;
    for (const name of ["acquire", "release", "renew"] as const) await admin.script("LOAD", SCRIPTS[name].text);
    await loadLibrary(admin);
    for (const size of sizes) {
      const hosts = hostList(size);
      const rand = seededRandom(size);
      const route = `bench-${size}`;
      const pools = new Map(clients.map((c) => [c, new Pool(c, route)]));
      const pool = pools.get(admin)!;
      await pool.acquire({ leaseId: "sync", hosts, hostStaleMs: 0 });
      const acquire = (client: Redis, i: number) => pools.get(client)!.acquire({ leaseId: `b${i}`, rnd: rand(), hostStaleMs: 0 })
        .then((r) => { if (r.status !== "OK") throw new Error(`acquire returned ${r.status}`); });
      await drive(clients, WARMUP, (c, i) => acquire(c, -1 - i));
      rows.push(await measure(clients, size, "acquire.lua (ours)", calls, acquire));
      // Renew every lease once, 256 ids per call (the plugin's batch); then release them all.
      const ids = Array.from({ length: calls }, (_, i) => `b${i}`);
      rows.push(await measure(clients, size, "renew.lua (256 ids)", BATCHES * Math.floor(calls / 256 / BATCHES), (client, i) =>
        pools.get(client)!.renew(600_000, ids.slice(i * 256, (i + 1) * 256))));
      rows.push(await measure(clients, size, "release.lua (ours)", calls, (client, i) =>
        pools.get(client)!.release(`b${i}`).then((n) => { if (n !== 1) throw new Error(`release returned ${n}`); })));
      // The same scripts as the plugin calls them where Redis has functions (FCALL of the library).
      callScriptsVia("fcall");
      try {
        rows.push(await measure(clients, size, "acquire, FCALL (ours)", calls, (client, i) => pools.get(client)!.acquire({ leaseId: `f${i}`, rnd: rand(), hostStaleMs: 0 })
          .then((r) => { if (r.status !== "OK") throw new Error(`acquire returned ${r.status}`); })));
        rows.push(await measure(clients, size, "release, FCALL (ours)", calls, (client, i) =>
          pools.get(client)!.release(`f${i}`).then((n) => { if (n !== 1) throw new Error(`release returned ${n}`); })));
      } finally {
        callScriptsVia("evalsha");
      }

      const zkey = `{bench-photoroom-${size}}:load`;
      await admin.zadd(zkey, ...hosts.flatMap((h) => [0, h]));
      rows.push(await measure(clients, size, "Photoroom ZSET pick (floor)", calls, (client) => client.evalsha(photoroomSha, 1, zkey)));
      // Higress's detail HMGET unpacks every host onto Lua's stack, which overflows past ~8,000.
      if (size > 5000) continue;
      const hkey = `higress:global_least_request_table:bench-${size}:c`;
      rows.push(await measure(clients, size, "Higress per-host scan", Math.max(200, Math.floor(calls / Math.max(1, size / 100))),
        (client, i) => client.evalsha(higressSha, 2, hkey, `${hkey}:last_clean_time`, i, "1", ...hosts)));
    }
  } finally {
    for (const c of clients) c.disconnect();
    if (server.owned) await server.stop();
  }
  return rows;
}

export function printLuaPickTable(rows: LuaPickRow[]): void {
  console.log("| hosts | script | calls | mean us in Redis | p99 us in Redis | Redis CPU us/call | calls/s one core | calls/s reached (16 conns) | Redis calls/script |");
  console.log("|---:|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(`| ${r.hosts} | ${r.script} | ${r.calls} | ${r.meanUs.toFixed(1)} | ${r.p99Us.toFixed(0)} | ${r.cpuUs.toFixed(1)} | ${r.coreCapacity.toFixed(0)} | ${r.perSecond.toFixed(0)} | ${r.redisCalls.toFixed(1)} |`);
  }
}

// Worst cases (issue 11 item 4): the longest single calls the caps allow, each built on purpose.
// Reported: Redis's own duration of the call (SLOWLOG, wall time inside Redis) and Redis CPU
// (INFO cpu before and after, which includes ~40 us for the INFO itself), best of 3.
export interface WorstRow { input: string; slowlogUs: number; cpuUs: number }

async function oneCall(redis: Redis, make: () => Promise<unknown>): Promise<{ slowlogUs: number; cpuUs: number }> {
  await redis.config("SET", "slowlog-log-slower-than", "0");
  await redis.slowlog("RESET");
  const before = await cpuUs(redis);
  await make();
  const after = await cpuUs(redis);
  const log = (await redis.slowlog("GET", 16)) as Array<[number, number, number, string[]]>;
  await redis.config("SET", "slowlog-log-slower-than", "10000");
  const evals = log.filter((e) => /^eval/i.test(String(e[3][0])));
  return { slowlogUs: Math.max(0, ...evals.map((e) => Number(e[2]))), cpuUs: after - before };
}

export async function runLuaWorstCases(): Promise<WorstRow[]> {
  const server = await startRedis();
  const redis = new Redis(server.port, server.host);
  const rows: WorstRow[] = [];
  let round = 0;
  const best = async (input: string, prepare: (pool: Pool) => Promise<void>, call: (pool: Pool) => Promise<unknown>) => {
    let top: WorstRow | null = null;
    for (let i = 0; i < 3; i++) {
      const pool = new Pool(redis, `worst-${++round}`);
      await prepare(pool);
      const r = await oneCall(redis, () => call(pool));
      if (top === null || r.slowlogUs < top.slowlogUs) top = { input, ...r };
    }
    rows.push(top!);
  };
  const sleepMs = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const many = hostList(10_000);
  try {
    const thousand = hostList(1_000);
    await best("acquire with a sync of 500 hosts (one call's cap)", async () => {}, (p) => p.acquire({ leaseId: "s", hosts: thousand.slice(0, 500) }));
    await best("sync.lua: last chunk of 500 hosts onto 9,500 staged, swapped in (10,000: the set's cap)", async (p) => {
      for (let i = 0; i < 19; i++) await runScript(redis, "sync", [...p.keys(), p.stagingKey()], [60_000, 1_200_000, i * 500, 0, ...many.slice(i * 500, (i + 1) * 500)]);
    }, (p) => runScript(redis, "sync", [...p.keys(), p.stagingKey()], [60_000, 1_200_000, 9_500, 1, ...many.slice(9_500)]));
    for (const aggregates of [256]) {
      await best(`acquire settling ${aggregates.toLocaleString("en-US")} due aggregates (${aggregates.toLocaleString("en-US")} hosts, dead leases)`, async (p) => {
        const hosts = hostList(aggregates + 76);
        await p.acquire({ leaseId: "s", hosts, leaseTtlMs: 1_000 });
        await Promise.all(hosts.map((h, i) => p.acquire({ leaseId: `d${i}`, leaseTtlMs: 1_000, rnd: i })));
        await sleepMs(1_400);
      }, (p) => p.acquire({ leaseId: "x", leaseTtlMs: 60_000 }));
    }
    await best("healer, max 250 (the cap: 250 aggregates + 250 records)", async (p) => {
      await p.acquire({ leaseId: "s", hosts: thousand, leaseTtlMs: 600_000 });
      await Promise.all(Array.from({ length: 3_000 }, (_, i) => p.acquire({ leaseId: `d${i}`, leaseTtlMs: 1_000, rnd: i * 7 })));
      await sleepMs(1_400);
    }, (p) => p.reconcile(250));
    const cands = many.slice(0, 9_700).map((h) => h.replace(":8000", ":9000"));
    await best("scan past 256 lighter non-candidates, then ZMSCORE of a 500 sample of 9,700 candidates", async (p) => {
      await p.acquire({ leaseId: "s", fp: "all", hosts: [...hostList(300, 10), ...cands] });
      await redis.zadd(p.loadKey, ...cands.flatMap((h) => [5, h]));
      await p.acquire({ leaseId: "c", fp: "cand", hosts: cands });
    }, (p) => p.acquire({ leaseId: "scan", fp: "cand", rnd: 1 }));
    await best("renew of 64 ids (one call's cap) on 64 hosts", async (p) => {
      const hosts = hostList(64);
      await p.acquire({ leaseId: "l0", hosts });
      await Promise.all(Array.from({ length: 63 }, (_, i) => p.acquire({ leaseId: `l${i + 1}`, rnd: i })));
    }, (p) => p.renew(120_000, Array.from({ length: 64 }, (_, i) => `l${i}`)));
    await best("renew, restore mode: 64 leases Redis lost, counted again (64 hosts)", async (p) => {
      const hosts = hostList(64);
      await p.acquire({ leaseId: "s", hosts });
      await p.release("s");
    }, (p) => p.renewOpen(120_000, hostList(64).map((h, i) => [`lost${i}`, h, 1] as [string, string, number])));
    for (const levels of [64, 256]) {
      await best(`prefix.lua with ${levels.toLocaleString("en-US")} levels of 512-byte keys`, async (p) => {
        await p.acquire({ leaseId: "s", hosts: hostList(8) });
      }, (p) => runScript(redis, "prefix", [...p.keys(), ...Array.from({ length: levels }, (_, i) => `${p.ns}:p:`.padEnd(508, "m") + String(i).padStart(4, "0"))],
        ["w", 1, 60_000, 60_000, 0, 0, 600_000, 1800, 8, 1.5, 0, 0]));
    }
    await best("inspect of 500 hosts (one call's cap)", async (p) => { await p.acquire({ leaseId: "s", hosts: thousand }); }, (p) => p.inspect(thousand.slice(0, 500)));
  } finally {
    redis.disconnect();
    if (server.owned) await server.stop();
  }
  return rows;
}

// A busy fleet above hosts that left the candidate set (an unhealthy or scaled-down pod stays in
// the load ZSET at 0 for up to hostStaleMs, since another gateway's set may still hold it): every
// candidate holds one lease (load 1), the gone hosts none. Each acquire (n = 0) is released at
// once, so every call sees that same state. Several script sets in one run (label=<lua dir>
// arguments, e.g. an earlier commit's lua/, and this checkout's), each as EVALSHA and as FCALL of
// its function library, rounds interleaved. Reported per acquire: Redis's own time for the call
// (INFO commandstats usec of evalsha / fcall; the release goes by the other command so it is not
// counted), best of the rounds; and the Redis calls one acquire runs (commandstats around single
// calls, 50 of them), with how many were SRANDMEMBER / ZMSCORE (direct scoring of the set).
export interface GoneRow {
  fleet: number; gone: number; scripts: string; via: "evalsha" | "fcall";
  usPerCall: number; redisCalls: number; scoringCalls: number;
}

interface ScriptSet {
  label: string; acquireSha: string; releaseSha: string; acquireText: string; releaseText: string;
  acquireFn: string; releaseFn: string; libraryText: string;
}

function scriptSet(label: string, dir?: string): ScriptSet {
  const scripts = dir ? bundleLuaScripts(dir) : SCRIPTS;
  const library = dir ? luaLibrary(dir) : LIBRARY;
  return { label, acquireSha: scripts.acquire.sha1, releaseSha: scripts.release.sha1, acquireText: scripts.acquire.text,
    releaseText: scripts.release.text, acquireFn: library.functions.acquire, releaseFn: library.functions.release, libraryText: library.text };
}

async function commandStats(redis: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const out = new Map<string, { calls: number; usec: number }>();
  for (const m of (await redis.info("commandstats")).matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    out.set(m[1], { calls: Number(m[2]), usec: Number(m[3]) });
  }
  return out;
}

export async function runGoneHostsBench(calls = 4000, others: Array<[string, string]> = [],
  shapes: Array<[number, number]> = [[100, 0], [100, 1], [100, 100], [1000, 0], [1000, 1], [1000, 100], [1000, 1000]]): Promise<GoneRow[]> {
  const server = await startRedis();
  const clients = Array.from({ length: 4 }, () => new Redis(server.port, server.host));
  const [admin] = clients;
  const sets = [...others.map(([label, dir]) => scriptSet(label, dir)), scriptSet("this checkout")];
  const rows: GoneRow[] = [];
  const ROUNDS = 5;
  try {
    for (const set of sets) {
      for (const text of [set.acquireText, set.releaseText]) await admin.script("LOAD", text);
      try { await admin.call("FUNCTION", "LOAD", set.libraryText); } catch (err) { if (!String(err).includes("already exists")) throw err; }
    }
    for (const [fleet, gone] of shapes) {
      const pool = new Pool(admin, `gone-${fleet}-${gone}`);
      const candidates = hostList(fleet, 10);
      // The fleet's leases first (every member a candidate: each pick exact), then the gone hosts.
      await pool.sync(candidates, { fp: "cand", candTtlMs: 3_600_000, poolTtlMs: 7_200_000 });
      for (let i = 0; i < fleet; i++) {
        const r = await pool.acquire({ leaseId: `busy${i}`, fp: "cand", rnd: i * 7919 + 1, hostStaleMs: 0, leaseTtlMs: 3_600_000, candTtlMs: 3_600_000 });
        if (r.status !== "OK") throw new Error(`busy acquire returned ${r.status}`);
      }
      await pool.sync([...candidates, ...hostList(gone, 20)], { fp: "all", candTtlMs: 3_600_000, poolTtlMs: 7_200_000 });
      const loads = await pool.loads();
      if (candidates.some((h) => loads.get(h) !== 1)) throw new Error("the fleet is not at load 1 everywhere");
      const keys = pool.keys("cand");
      const acquireArgs = (id: string, rnd: number) => [id, 1, 3_600_000, 3_600_000, 0, rnd, 0, 0];
      const releaseArgs = (id: string) => [id, 0, 0, 7_200_000];
      const oneAcquire = async (client: Redis, set: ScriptSet, via: "evalsha" | "fcall", id: string, rnd: number) => {
        const reply = (via === "evalsha"
          ? await client.evalsha(set.acquireSha, keys.length, ...keys, ...acquireArgs(id, rnd))
          : await client.fcall(set.acquireFn, keys.length, ...keys, ...acquireArgs(id, rnd))) as string[];
        if (reply[0] !== "OK" || reply[2] !== "1") throw new Error(`${set.label} acquire returned ${reply.join(" ")}`);
        // The release by the other command, so the measured one counts acquires only.
        const released = via === "evalsha"
          ? await client.fcall(set.releaseFn, keys.length, ...keys, ...releaseArgs(id))
          : await client.evalsha(set.releaseSha, keys.length, ...keys, ...releaseArgs(id));
        if (released !== 1) throw new Error(`${set.label} release returned ${released}`);
      };
      const best = new Map<string, number>();
      const rand = seededRandom(fleet * 7 + gone);
      for (let round = 0; round < ROUNDS; round++) {
        for (const set of sets) {
          for (const via of ["evalsha", "fcall"] as const) {
            const before = (await commandStats(admin)).get(via) ?? { calls: 0, usec: 0 };
            let next = 0;
            const per = Math.max(1, Math.floor(calls / ROUNDS));
            await Promise.all(clients.map(async (client) => {
              while (next < per) { const i = next++; await oneAcquire(client, set, via, `m${round}-${i}`, rand()); }
            }));
            const after = (await commandStats(admin)).get(via)!;
            const us = (after.usec - before.usec) / (after.calls - before.calls);
            const key = `${set.label} ${via}`;
            if (!best.has(key) || us < best.get(key)!) best.set(key, us);
          }
        }
      }
      for (const set of sets) {
        for (const via of ["evalsha", "fcall"] as const) {
          // Redis calls of one acquire: commandstats before and after each of 50 single calls.
          let inner = 0, scoring = 0;
          const samples = 50;
          for (let i = 0; i < samples; i++) {
            const before = await commandStats(admin);
            const id = `c${i}`;
            const reply = (via === "evalsha"
              ? await admin.evalsha(set.acquireSha, keys.length, ...keys, ...acquireArgs(id, rand()))
              : await admin.fcall(set.acquireFn, keys.length, ...keys, ...acquireArgs(id, rand()))) as string[];
            const after = await commandStats(admin);
            if (reply[0] !== "OK") throw new Error(`${set.label} acquire returned ${reply[0]}`);
            for (const [name, s] of after) {
              if (name === "info" || name === via) continue;
              const d = s.calls - (before.get(name)?.calls ?? 0);
              inner += d;
              if (name === "srandmember" || name === "zmscore") scoring += d;
            }
            await runScript(admin, "release", keys, releaseArgs(id));
          }
          rows.push({ fleet, gone, scripts: set.label, via, usPerCall: best.get(`${set.label} ${via}`)!,
            redisCalls: inner / samples, scoringCalls: scoring / samples });
        }
      }
    }
  } finally {
    for (const c of clients) c.disconnect();
    if (server.owned) await server.stop();
  }
  return rows;
}

// Resync: an acquire that carries its VM's candidate list (n hosts), as every VM's does once per
// half candidateTTL. "due": the set in Redis is older than half its lifetime, so the acquire
// rewrites it (DEL, SADD, ZADD NX of the load, ZADD of seen: what every resend cost before); "fresh":
// another VM synced it less than half a lifetime ago, so it is left as it is. Redis time per
// acquire (commandstats usec of evalsha; the release goes by FCALL so it is not counted), best of
// 5 rounds.
export async function runResyncBench(calls = 400, sizes = [100, 500]): Promise<Array<{ hosts: number; state: string; us: number }>> {
  const server = await startRedis();
  const admin = new Redis(server.port, server.host);
  const rows: Array<{ hosts: number; state: string; us: number }> = [];
  try {
    await admin.script("LOAD", SCRIPTS.acquire.text);
    try { await admin.call("FUNCTION", "LOAD", LIBRARY.text); } catch (err) { if (!String(err).includes("already exists")) throw err; }
    for (const n of sizes) {
      const pool = new Pool(admin, `resync-${n}`);
      const list = hostList(n, 10);
      await pool.sync(list, { fp: "cand", candTtlMs: 30_000 });
      const keys = pool.keys("cand");
      for (const state of ["due", "fresh"]) {
        let best = Infinity;
        for (let round = 0; round < 5; round++) {
          const before = (await commandStats(admin)).get("evalsha") ?? { calls: 0, usec: 0 };
          for (let i = 0; i < calls; i++) {
            if (state === "due") await admin.pexpire(pool.candKey("cand"), 10_000);
            else await admin.pexpire(pool.candKey("cand"), 29_000);
            const id = `${state}-${round}-${i}`;
            const reply = (await admin.evalsha(SCRIPTS.acquire.sha1, keys.length, ...keys, id, 1, 60_000, 30_000, 0, i + 1, 3_600_000, n, ...list)) as string[];
            if (reply[0] !== "OK") throw new Error(`acquire returned ${reply.join(" ")}`);
            await admin.fcall(LIBRARY.functions.release, 3, keys[0], keys[1], keys[2], id, 0, 0, 7_200_000);
          }
          const after = (await commandStats(admin)).get("evalsha")!;
          best = Math.min(best, (after.usec - before.usec) / (after.calls - before.calls));
        }
        rows.push({ hosts: n, state, us: best });
      }
    }
  } finally {
    admin.disconnect();
    if (server.owned) await server.stop();
  }
  return rows;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === "resync") {
    console.log("| hosts in the list | the set in Redis | us in Redis per acquire (commandstats) |");
    console.log("|---:|---|---:|");
    for (const r of await runResyncBench(Number(process.argv[3] ?? 400))) console.log(`| ${r.hosts} | ${r.state === "due" ? "older than half its lifetime: rewritten" : "synced by another VM less than half a lifetime ago: left"} | ${r.us.toFixed(1)} |`);
  } else if (process.argv[2] === "gone") {
    // Other script sets to measure in the same run: label=<lua dir> (e.g. an earlier commit's lua/).
    const others = process.argv.slice(4).map((a) => a.split("=", 2) as [string, string]);
    const rows = await runGoneHostsBench(Number(process.argv[3] ?? 4000), others);
    console.log("| candidates at load 1 | gone hosts at 0 | scripts | call | us in Redis per acquire (commandstats) | Redis calls per acquire | of which SRANDMEMBER + ZMSCORE |");
    console.log("|---:|---:|---|---|---:|---:|---:|");
    for (const r of rows) console.log(`| ${r.fleet} | ${r.gone} | ${r.scripts} | ${r.via.toUpperCase()} | ${r.usPerCall.toFixed(1)} | ${r.redisCalls.toFixed(1)} | ${r.scoringCalls.toFixed(1)} |`);
  } else if (process.argv[2] === "worst") {
    console.log("| constructed input | time inside Redis (SLOWLOG), us | Redis CPU, us |");
    console.log("|---|---:|---:|");
    for (const r of await runLuaWorstCases()) console.log(`| ${r.input} | ${r.slowlogUs} | ${r.cpuUs.toFixed(0)} |`);
  } else {
    const calls = Number(process.argv[2] ?? 20000);
    const sizes = process.argv[3] ? process.argv[3].split(",").map(Number) : SIZES;
    printLuaPickTable(await runLuaPickBench(calls, sizes));
  }
}
