// Work per call stays bounded as the pool grows: the commands each script runs inside Redis are
// read from MONITOR (which lists every command a Lua script issues, with its arguments) at 10,
// 100 and 1000 hosts. No timing: the assertions are about which commands run and over what range.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { startRedis, type RedisFixture } from "../helpers/redis.js";
import { Pool, hostList, seededRandom } from "./pool.js";

// Commands that cost O(1) or O(log N) per call (ZRANGE / ZRANGEBYSCORE are checked for bounded
// ranges separately). Anything else (SMEMBERS, HGETALL, ZSCAN, KEYS...) is a failure.
const BOUNDED = new Set(["TIME", "HGET", "HSET", "HSETNX", "HINCRBY", "HDEL", "HEXISTS", "EXISTS", "ZSCORE", "ZADD",
  "ZINCRBY", "ZREM", "ZCOUNT", "SISMEMBER", "SMISMEMBER", "PTTL", "PEXPIRE", "ZRANGE", "ZRANGEBYSCORE", "HMGET", "HSCAN", "ZMSCORE"]);
const MAX_FIELDS = 200; // fields per variadic hash call (lib.lua ARG_CHUNK)
const MAX_HEAL_BATCH = 250; // HSCAN COUNT of the healer
const MAX_RANGE = 32; // ZRANGE windows (the scan reads 16 at a time)
const MAX_SETTLE = 1024; // due bucket entries an acquire settles, at most

let server: RedisFixture;
let redis: Redis;
let monitor: Redis & { on(event: "monitor", cb: (time: string, args: string[], source: string) => void): unknown };
const feed: Array<{ source: string; args: string[] }> = [];

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.port, server.host);
  await redis.ping(); // ready first: see test/e2e/stream-end-release.test.ts
  monitor = (await redis.monitor()) as typeof monitor;
  monitor.on("monitor", (_time, args, source) => feed.push({ source, args }));
});
afterAll(async () => {
  monitor.disconnect();
  redis.disconnect();
  if (server.owned) await server.stop();
});

/** Runs call() and returns the commands its script issued (the Lua lines after its EVAL/EVALSHA). */
async function scriptCommands(marker: string, call: () => Promise<unknown>): Promise<string[][]> {
  feed.length = 0;
  await call();
  const done = `done-${marker}-${Math.random()}`;
  await redis.echo(done);
  while (!feed.some((e) => e.args[0]?.toLowerCase() === "echo" && e.args[1] === done)) await new Promise((r) => setTimeout(r, 5));
  // The last EVAL/EVALSHA naming the marker: an EVALSHA answered NOSCRIPT is followed by the EVAL
  // that ran.
  let start = -1;
  feed.forEach((e, i) => { if (e.source !== "lua" && /^eval/i.test(e.args[0]) && e.args.includes(marker)) start = i; });
  expect(start).toBeGreaterThanOrEqual(0);
  const out: string[][] = [];
  for (let i = start + 1; i < feed.length && feed[i].source === "lua"; i++) out.push(feed[i].args);
  return out;
}

function expectBounded(commands: string[][]): void {
  for (const [name, ...args] of commands) {
    const cmd = name.toUpperCase();
    expect(BOUNDED.has(cmd), `unbounded command ${cmd}`).toBe(true);
    if (cmd === "ZRANGE") {
      const [start, stop] = [Number(args[1]), Number(args[2])];
      expect(stop, `ZRANGE ${args.join(" ")}`).toBeGreaterThanOrEqual(start);
      expect(stop - start + 1).toBeLessThanOrEqual(MAX_RANGE);
    }
    if (cmd === "ZRANGEBYSCORE") {
      const limit = args.findIndex((a) => a.toUpperCase() === "LIMIT");
      expect(limit, `ZRANGEBYSCORE without LIMIT: ${args.join(" ")}`).toBeGreaterThan(0);
      expect(Number(args[limit + 2])).toBeLessThanOrEqual(MAX_SETTLE);
    }
    if (cmd === "HMGET") expect(args.length - 1).toBeLessThanOrEqual(MAX_FIELDS);
    if (cmd === "SMISMEMBER") expect(args.length - 1).toBeLessThanOrEqual(MAX_RANGE); // one scan window
    if (cmd === "ZMSCORE") expect(args.length - 1).toBeLessThanOrEqual(MAX_RANGE); // a tie window's seen scores
    if (cmd === "HSCAN") {
      const count = args.findIndex((a) => a.toUpperCase() === "COUNT");
      expect(count, `HSCAN without COUNT: ${args.join(" ")}`).toBeGreaterThan(0);
      expect(Number(args[count + 1])).toBeLessThanOrEqual(MAX_HEAL_BATCH);
    }
  }
}

/** A pool of `size` hosts with half of them carrying one lease (so loads are 0 and 1). */
async function busyPool(size: number): Promise<Pool> {
  const pool = new Pool(redis);
  const hosts = hostList(size);
  await pool.acquire({ leaseId: "sync", hosts });
  const rand = seededRandom(size);
  for (let i = 0; i < size / 2; i++) await pool.acquire({ leaseId: `busy${i}`, rnd: rand() });
  return pool;
}

describe("bounded work per call", () => {
  it("a steady-state acquire runs the same bounded commands at 10, 100 and 1000 hosts", async () => {
    const counts: number[] = [];
    for (const size of [10, 100, 1000]) {
      const pool = await busyPool(size);
      const commands = await scriptCommands(`probe${size}`, () => pool.acquire({ leaseId: `probe${size}`, rnd: 12345 }));
      expectBounded(commands);
      expect(commands.filter(([c]) => c.toUpperCase() === "ZINCRBY")).toHaveLength(1); // it did acquire
      // A host's first lease in a 250 ms bucket indexes the bucket and checks the pool's TTL.
      const newBucket = commands.some(([c, , , m]) => c.toUpperCase() === "ZADD" && m?.startsWith("@"));
      // 12: the tie window (ZRANGE, SMISMEMBER, ZMSCORE of its seen scores) and the pick's mark
      // (TIME, ZADD XX) where a single draw and SISMEMBER used to be: 9 before.
      expect(commands.length - (newBucket ? 2 : 0)).toBeLessThanOrEqual(12);
      counts.push(commands.length - (newBucket ? 2 : 0));
    }
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1); // one optional rank lookup
  });

  it("release, renew and reconcile stay bounded at 1000 hosts", async () => {
    const pool = await busyPool(1000);
    for (const [marker, call] of [
      ["busy1", () => pool.release("busy1", { penaltyCost: 2, penaltyTtlMs: 1000 })],
      ["busy2", () => pool.renew(60_000, ["busy2", "busy3"])],
      ["20", () => pool.reconcile(20)],
    ] as Array<[string, () => Promise<unknown>]>) {
      const commands = await scriptCommands(marker, call);
      expectBounded(commands);
      expect(commands.length).toBeLessThanOrEqual(20);
    }
  });

  it("the scan path reads only the windows below the best candidate", async () => {
    const pool = new Pool(redis);
    const others = hostList(1000, 10);
    const candidates = hostList(4, 10).map((h) => h.replace(":8000", ":9000")); // interleaved in sort order
    await pool.acquire({ leaseId: "sync", fp: "all", hosts: [...others, ...candidates] });
    // 950 non-candidates get load 1 and sit above the candidates; 50 stay at 0, below them.
    const rand = seededRandom(3);
    for (let i = 0; i < 950; i++) await pool.acquire({ leaseId: `o${i}`, fp: "all", rnd: rand() });
    await redis.zadd(pool.loadKey, ...candidates.flatMap((h) => [0.5, h]));
    await pool.acquire({ leaseId: "c-sync", fp: "sub", hosts: candidates });
    await pool.release("c-sync");
    const lighter = await redis.zcount(pool.loadKey, "-inf", "(0.5");
    const commands = await scriptCommands("scan", () => pool.acquire({ leaseId: "scan", fp: "sub", rnd: 1 }));
    expectBounded(commands);
    const windows = commands.filter(([c, , start, stop]) => c.toUpperCase() === "ZRANGE" && Number(stop) - Number(start) === 15);
    expect(windows.length).toBeGreaterThanOrEqual(Math.ceil(lighter / 16)); // the scan did run
    expect(windows.length).toBeLessThanOrEqual(Math.ceil((lighter + candidates.length) / 16) + 1);
    expect(candidates).toContain((await redis.hget(pool.leaseKey, "scan"))!.split(" ")[0]);
  });
});
