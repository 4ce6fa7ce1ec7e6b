// Test driver for the Lua scripts of lua/: builds one pool's keys (route + cluster, one hash tag)
// and calls the bundled scripts the way the plugin does (EVALSHA, EVAL after NOSCRIPT; or FCALL of
// the function library, callScriptsVia).
// Also reads the raw pool state so tests can check the invariants directly in Redis.
import type { Redis } from "ioredis";
import { bundleLuaScripts, luaLibrary } from "../../scripts/lua-bundle.mjs";

// LLMLB_LUA_DIR: another lua/ directory (bench/lua-pick.ts measures an earlier commit's scripts with it).
export const SCRIPTS = bundleLuaScripts(process.env.LLMLB_LUA_DIR || undefined);
/** The same scripts as one function library (what the plugin calls with FCALL). */
export const LIBRARY = luaLibrary(process.env.LLMLB_LUA_DIR || undefined);
export type ScriptName = "acquire" | "release" | "renew" | "reconcile" | "inspect" | "prefix_write" | "charge" | "prefix" | "model" | "queue" | "sync" | "records" | "score";

/** Hosts one call may carry (lua/lib.lua MAX_HOSTS); lease ids one renew may carry (MAX_RENEW_IDS). */
export const CALL_HOSTS = 500;
export const RENEW_IDS = 64;

/** How runScript calls a script: EVALSHA (the default) or FCALL of LIBRARY's function. */
let via: "evalsha" | "fcall" = "evalsha";
export function callScriptsVia(how: "evalsha" | "fcall"): void { via = how; }

/** FUNCTION LOAD of LIBRARY ("already exists" is fine: same name, same text). */
export async function loadLibrary(redis: Redis): Promise<void> {
  try {
    await redis.call("FUNCTION", "LOAD", LIBRARY.text);
  } catch (err) {
    if (!String((err as Error).message).includes("already exists")) throw err;
  }
}

/** EVALSHA, falling back to EVAL when the server does not know the script yet (or FCALL, see via). */
export async function runScript(redis: Redis, name: ScriptName, keys: string[], args: Array<string | number>): Promise<unknown> {
  if (via === "fcall") {
    const fn = LIBRARY.functions[name];
    try {
      return await redis.fcall(fn, keys.length, ...keys, ...args);
    } catch (err) {
      if (!String((err as Error).message).startsWith("ERR Function not found")) throw err;
      await loadLibrary(redis);
      return redis.fcall(fn, keys.length, ...keys, ...args);
    }
  }
  const script = SCRIPTS[name];
  try {
    return await redis.evalsha(script.sha1, keys.length, ...keys, ...args);
  } catch (err) {
    if (!String((err as Error).message).startsWith("NOSCRIPT")) throw err;
    return redis.eval(script.text, keys.length, ...keys, ...args);
  }
}

export interface AcquireOptions {
  leaseId: string;
  cost?: number;
  leaseTtlMs?: number;
  candTtlMs?: number;
  limit?: number;
  rnd?: number;
  hostStaleMs?: number;
  fp?: string;
  /** Sent as the candidate list (n > 0); omitted = n = 0 ("the set for fp exists"). */
  hosts?: string[];
  /** Absolute deadline in Redis's clock (ms); omitted = none. */
  deadlineMs?: number;
  /** Higress's counter hash (compat mode): passed as the last key, with compat = 1. */
  compatKey?: string;
}

export interface AcquireResult {
  status: "OK" | "SHED" | "NEED_CANDIDATES" | "NO_CANDIDATE" | "LATE" | "RELEASED" | "SETTLING";
  host?: string;
  load?: number;
}

export interface ReleaseOptions {
  penaltyCost?: number;
  penaltyTtlMs?: number;
  poolTtlMs?: number;
  tombstoneMs?: number;
  compatKey?: string;
}

/** Trailing optional arguments (deadline_ms, compat) and the key list with Higress's counter last. */
function withOptions(keys: string[], args: Array<string | number>, first: number | undefined, compatKey: string | undefined) {
  if (compatKey !== undefined) return { keys: [...keys, compatKey], args: [...args, first ?? 0, 1] };
  if (first !== undefined) return { keys, args: [...args, first] };
  return { keys, args };
}

let poolCounter = 0;

/** Deterministic 31-bit generator for the `rnd` argument (tests must not be flaky). */
export function seededRandom(seed: number): () => number {
  let x = seed % 2147483647 || 1;
  return () => (x = (x * 48271) % 2147483647);
}

export class Pool {
  readonly ns: string;

  constructor(readonly redis: Redis, route = `route-${process.pid}-${++poolCounter}`, cluster = "outbound|8000||vllm.static") {
    this.ns = `{llmlb:${route}:${cluster}}`;
  }

  get loadKey() { return `${this.ns}:load`; }
  get leasesKey() { return `${this.ns}:leases`; }
  get leaseKey() { return `${this.ns}:lease`; }
  get seenKey() { return `${this.ns}:seen`; }
  candKey(fp: string) { return `${this.ns}:cand:${fp}`; }
  keys(fp = "fp") { return [this.loadKey, this.leasesKey, this.leaseKey, this.candKey(fp), this.seenKey]; }

  async acquire(o: AcquireOptions): Promise<AcquireResult> {
    if ((o.hosts?.length ?? 0) > CALL_HOSTS) {
      // The plugin's flow for a list too long for one call: sync.lua in chunks, then n = 0.
      await this.sync(o.hosts!, { fp: o.fp, candTtlMs: o.candTtlMs });
      return this.acquire({ ...o, hosts: [] });
    }
    const hosts = o.hosts ?? [];
    const call = withOptions(this.keys(o.fp), [
      o.leaseId, o.cost ?? 1, o.leaseTtlMs ?? 60_000, o.candTtlMs ?? 60_000, o.limit ?? 0,
      o.rnd ?? 0, o.hostStaleMs ?? 600_000, hosts.length, ...hosts,
    ], o.deadlineMs, o.compatKey);
    let reply = (await runScript(this.redis, "acquire", call.keys, call.args)) as string[];
    // The plugin's flow: more buckets were due than one call settles, send it again.
    for (let i = 0; i < 64 && reply[0] === "SETTLING"; i++) reply = (await runScript(this.redis, "acquire", call.keys, call.args)) as string[];
    const [status, a, b] = reply;
    // LATE carries Redis's time where the others carry host, load.
    if (status === "LATE") return { status, host: undefined, load: Number(a) };
    return { status: status as AcquireResult["status"], host: a, load: b === undefined ? undefined : Number(b) };
  }

  /** The plugin's flow: n = 0 first, the candidate list only when the script asks for it. */
  async acquireWithSync(o: AcquireOptions & { hosts: string[] }): Promise<AcquireResult> {
    const first = await this.acquire({ ...o, hosts: [] });
    if (first.status !== "NEED_CANDIDATES") return first;
    return this.acquire(o);
  }

  async release(leaseId: string, o: ReleaseOptions = {}): Promise<number> {
    const call = withOptions(this.keys(), [leaseId, o.penaltyCost ?? 0, o.penaltyTtlMs ?? 0, o.poolTtlMs ?? 1_200_000],
      o.tombstoneMs, o.compatKey);
    return (await runScript(this.redis, "release", call.keys, call.args)) as number;
  }

  /** The plugin's flow: RENEW_IDS ids per call. */
  async renew(leaseTtlMs: number, leaseIds: string[]): Promise<number> {
    let renewed = 0;
    for (let start = 0; start < Math.max(1, leaseIds.length); start += RENEW_IDS) {
      renewed += (await runScript(this.redis, "renew", this.keys(), [leaseTtlMs, ...leaseIds.slice(start, start + RENEW_IDS)])) as number;
    }
    return renewed;
  }

  /** Restore mode (what the plugin sends): each open lease with its host and cost. */
  async renewOpen(leaseTtlMs: number, open: Array<[string, string, number]>): Promise<number> {
    return (await runScript(this.redis, "renew", this.keys(), [leaseTtlMs, "+", ...open.flat()])) as number;
  }

  stagingKey(fp = "fp", vm = "t") { return `${this.candKey(fp)}:next:${vm}`; }

  /** sync.lua in chunks of CALL_HOSTS (the plugin's flow); returns the last reply (the set's size). */
  async sync(hosts: string[], o: { fp?: string; candTtlMs?: number; poolTtlMs?: number; vm?: string } = {}): Promise<number> {
    const fp = o.fp ?? "fp";
    let size = 0;
    for (let start = 0; start < hosts.length; start += CALL_HOSTS) {
      const chunk = hosts.slice(start, start + CALL_HOSTS);
      const last = start + chunk.length >= hosts.length ? 1 : 0;
      size = (await runScript(this.redis, "sync", [...this.keys(fp), this.stagingKey(fp, o.vm)],
        [o.candTtlMs ?? 60_000, o.poolTtlMs ?? 1_200_000, start, last, ...chunk])) as number;
    }
    return size;
  }

  /** The healer: {settled bucket entries, removed lease records, more (0 | 1)}. */
  async reconcile(max = 100, compatKey?: string): Promise<{ settled: number; removed: number; more: number }> {
    const keys = compatKey === undefined ? this.keys() : [...this.keys(), compatKey];
    const args = compatKey === undefined ? [max] : [max, 1];
    const [settled, removed, more] = (await runScript(this.redis, "reconcile", keys, args)) as number[];
    return { settled, removed, more };
  }

  async inspect(hosts: string[]): Promise<string[]> {
    return (await runScript(this.redis, "inspect", [this.loadKey], hosts)) as string[];
  }

  /** host -> load, read straight from the ZSET. */
  async loads(): Promise<Map<string, number>> {
    const flat = await this.redis.zrange(this.loadKey, 0, -1, "WITHSCORES");
    const out = new Map<string, number>();
    for (let i = 0; i < flat.length; i += 2) out.set(flat[i], Number(flat[i + 1]));
    return out;
  }

  /** Lease ids (tombstones included): the fields of the lease HASH but the bucket aggregates
   *  ("@...") and the healer's cursor ("#gc"). */
  async leaseIds(): Promise<string[]> {
    return (await this.redis.hkeys(this.leaseKey)).filter((m) => !m.startsWith("@") && !m.startsWith("#")).sort();
  }

  /** Sum of the loads of every host. */
  async totalLoad(): Promise<number> {
    return [...(await this.loads()).values()].reduce((a, b) => a + b, 0);
  }

  /** Every key of the pool (SCAN on the hash tag). */
  async allKeys(): Promise<string[]> {
    const found: string[] = [];
    let cursor = "0";
    do {
      const [next, batch] = await this.redis.scan(cursor, "MATCH", `${this.ns.replace(/[[\]*?\\]/g, "\\$&")}*`, "COUNT", 1000);
      found.push(...batch);
      cursor = next;
    } while (cursor !== "0");
    return found.sort();
  }

  /** Contents of every pool key (TTLs excluded), to prove a call wrote nothing. */
  async snapshot(): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const key of await this.allKeys()) {
      const type = await this.redis.type(key);
      if (type === "zset") out[key] = await this.redis.zrange(key, 0, -1, "WITHSCORES");
      else if (type === "hash") out[key] = await this.redis.hgetall(key);
      else if (type === "set") out[key] = (await this.redis.smembers(key)).sort();
      else out[key] = type;
    }
    return out;
  }
}

/** count distinct "ip:port" hosts; prefix keeps lists of one test apart. */
export function hostList(count: number, prefix = 10): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}.0.${Math.floor(i / 250)}.${(i % 250) + 1}:8000`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
