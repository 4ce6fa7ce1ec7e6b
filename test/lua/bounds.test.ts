// Bounded writes (issue 11 item 4), Lua side: every script caps what it writes (lease id 128 bytes,
// host 261, level key 512, 1024 levels, 10,000 hosts), refusing larger input before writing
// anything, so the bytes one request leaves in Redis are bounded whatever the request size
// (lua/README.md, "Bounds"). The plugin hashes the model name; these caps hold even if it did not.
import { beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { useRedisSuite } from "../helpers/redis.js";
import { Pool, hostList, runScript } from "./pool.js";

const suite = useRedisSuite();
let redis: Redis;
beforeAll(() => { ({ redis } = suite); });

// The bound README states for one prefix_cache request (no candidate sync): the lease record
// (id + "<host> <cost> <bucket>", no index entry), a bucket aggregate ("@<bucket> <host>" + cost)
// and its index entry, and 64 levels (the default maxPrefixLevels) of key + host; the script's own
// cap is 256 levels (maxPrefixLevels' maximum, and compat).
const MAX_ID = 128, MAX_HOST = 261, MAX_KEY = 512, MAX_LEVELS = 64, SCRIPT_MAX_LEVELS = 256;
const LEASE_BYTES = MAX_ID + 3 * (MAX_HOST + 25); // 986
const BYTES_PER_REQUEST = LEASE_BYTES + MAX_LEVELS * (MAX_KEY + MAX_HOST); // 50,458

/** Bytes of every key name, member, field and value in the database. */
async function storedBytes(): Promise<number> {
  let total = 0;
  for (const key of await redis.keys("*")) {
    total += Buffer.byteLength(key);
    const type = await redis.type(key);
    if (type === "string") total += Buffer.byteLength((await redis.get(key)) ?? "");
    else if (type === "hash") for (const [f, v] of Object.entries(await redis.hgetall(key))) total += Buffer.byteLength(f) + Buffer.byteLength(v);
    else if (type === "zset") for (const m of await redis.zrange(key, 0, -1)) total += Buffer.byteLength(m) + 8;
    else if (type === "set") for (const m of await redis.smembers(key)) total += Buffer.byteLength(m);
  }
  return total;
}

function prefixArgs(leaseId: string, hosts: string[]): Array<string | number> {
  return [leaseId, 1, 60_000, 60_000, 0, 0, 600_000, 1800, 8, 1.5, 0, hosts.length, ...hosts];
}

describe("caps on what a script writes", () => {
  it("one request at every cap writes at most the stated bound", async () => {
    const longHost = `${"h".repeat(MAX_HOST - 5)}:8000`;
    const pool = new Pool(redis, "r".repeat(40));
    await pool.acquire({ leaseId: "sync", hosts: [longHost], fp: "f" }); // the pool's keys exist
    const levels = Array.from({ length: MAX_LEVELS }, (_, i) => `${pool.ns}:p:`.padEnd(MAX_KEY - 4, "m") + String(i).padStart(4, "0"));
    const before = await storedBytes();
    const reply = await runScript(redis, "prefix", [...pool.keys("f"), ...levels], prefixArgs("i".repeat(MAX_ID), [])) as string[];
    expect(reply[0]).toBe("OK");
    const written = (await storedBytes()) - before;
    expect(written).toBeGreaterThan(MAX_LEVELS * MAX_KEY); // the levels were written...
    expect(written).toBeLessThanOrEqual(BYTES_PER_REQUEST); // ...and nothing beyond the bound
  });

  it("refuses input past a cap before writing anything", async () => {
    const pool = new Pool(redis);
    const hosts = hostList(2);
    const huge = "x".repeat(100_000);
    const refusals: Array<[string, () => Promise<unknown>, RegExp]> = [
      ["lease id", () => pool.acquire({ leaseId: "i".repeat(MAX_ID + 1), hosts }), /lease_id longer than 128/],
      ["host", () => pool.acquire({ leaseId: "a", hosts: [`${"h".repeat(MAX_HOST)}:1`] }), /host must be at most 261/],
      ["host with a space", () => pool.acquire({ leaseId: "a", hosts: ["10.0.0.1 :80"] }), /host must be at most 261 bytes of/],
      ["reserved id", () => pool.acquire({ leaseId: "@1 h", hosts }), /must not start with @ or #/],
      ["reserved id (healer cursor)", () => pool.acquire({ leaseId: "#gc", hosts }), /must not start with @ or #/],
      ["host count", () => runScript(redis, "acquire", pool.keys(), ["a", 1, 60_000, 60_000, 0, 0, 0, 501, ...hostList(501)]), /n must be <= 500/],
      ["sync chunk", () => runScript(redis, "sync", [...pool.keys(), pool.stagingKey()], [60_000, 120_000, 0, 1, ...hostList(501)]), /at most 500 hosts per chunk/],
      ["sync total", () => runScript(redis, "sync", [...pool.keys(), pool.stagingKey()], [60_000, 120_000, 9_600, 1, ...hostList(401)]), /at most 10000 hosts/],
      ["sync lost chunk", () => runScript(redis, "sync", [...pool.keys(), pool.stagingKey()], [60_000, 120_000, 500, 1, ...hostList(2)]), /does not hold the 500 hosts sent/],
      ["scored services", () => runScript(redis, "score", pool.keys(), ["a", 1, 60_000, 60_000, 0, 0, 0, 501, ...hostList(501).flatMap((h) => [h, 1]), 0]), /k must be <= 500/],
      ["inspect hosts", () => pool.inspect(hostList(501)), /at most 500 hosts/],
      ["healer batch", () => pool.reconcile(251), /max must be <= 250/],
      ["level key", () => runScript(redis, "prefix", [...pool.keys(), `${pool.ns}:p:${huge}:x`], prefixArgs("a", hosts)), /key longer than 512/],
      ["level count", () => runScript(redis, "prefix", [...pool.keys(), ...Array.from({ length: SCRIPT_MAX_LEVELS + 1 }, (_, i) => `${pool.ns}:p:m:${i}`)], prefixArgs("a", hosts)), /at most 256 level keys/],
      ["prefix_write key", () => runScript(redis, "prefix_write", [`${pool.ns}:p:${huge}`], [hosts[0], 60]), /key longer than 512/],
      ["renew ids", () => runScript(redis, "renew", pool.keys(), [1000, ...Array.from({ length: 65 }, (_, i) => `r${i}`)]), /at most 64 lease ids/],
      ["cost", () => pool.acquire({ leaseId: "a", hosts, cost: 2e9 }), /cost must be <= 1000000000/],
      ["ttl", () => pool.acquire({ leaseId: "a", hosts, leaseTtlMs: 1e11 }), /lease_ttl_ms must be <=/],
    ];
    for (const [what, call, message] of refusals) {
      await expect(call(), what).rejects.toThrow(message);
    }
    expect(await pool.allKeys()).toEqual([]);
  });

  it("error messages quote at most 32 bytes of a bad value", async () => {
    const pool = new Pool(redis);
    const err = await pool.acquire({ leaseId: "a", hosts: hostList(1), cost: `9${"x".repeat(10_000)}` as unknown as number }).catch((e: Error) => e);
    expect(String((err as Error).message)).toMatch(/cost must be an integer >= 1, got 9x{31}(?!x)/);
  });
});
