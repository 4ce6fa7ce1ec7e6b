// A record-mode host facade driven by the fuzz properties: one release-.wasm host reused across
// runs (recreated after a VM failure, so one trap does not hide the next finding), every Redis call
// the plugin makes answered by a chosen function, and a ledger of lease ids per Lua script
// (acquire / release) read from the recorded queries, so "released exactly once" is checked from
// what the plugin sent, not from its internals.
// Failure behaviour: a VM failure is reported by `failure()`; nothing here throws on the guest's path.
import { TestHost, type HostSpec, type RecordedRedisCall, type TestStream } from "../../host-test/facade/index.js";
import { parseReply } from "../../host-test/resp.js";
import { scriptOf } from "../helpers/script-calls.js";

export const WASM = "build/ai-load-balancer.wasm";
export const CLUSTER = "outbound|8000||vllm.static";
export const METRICS_CLUSTER = "llm-metrics-original-dst";
/** The Redis cluster the configurations name (serviceFQDN redis.static, port 6379). */
export const REDIS_CLUSTER = "outbound|6379||redis.static";
export const HOSTS = ["10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000"];

/** Runs per property: small and seeded in npm test, larger under `npm run soak` (FUZZ_RUNS). */
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 0;
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20261122);
export const runs = (inTest: number) => (FUZZ_RUNS > 0 ? FUZZ_RUNS : inTest);
/** Per-test time limit: the default runs fit well inside a minute; larger runs get an hour. */
export const FUZZ_TIMEOUT_MS = FUZZ_RUNS > 0 ? 3_600_000 : 60_000;


export interface ScriptCall { script: string; keys: string[]; args: string[] }

/** The scripts that take a lease (ARGV 1 its id): acquire.lua and those built on it. */
const ACQUIRING = new Set(["acquire", "charge", "prefix", "score"]);

/** The Lua script a recorded query runs (FCALL, EVALSHA or EVAL), with its keys and arguments; null otherwise. */
export function scriptCall(c: RecordedRedisCall): ScriptCall | null {
  let v: unknown;
  try { v = parseReply(c.query); } catch { return null; }
  if (!Array.isArray(v) || v.length < 3) return null;
  const parts = v.map(String);
  const script = scriptOf(parts);
  if (!script) return null;
  const n = Number(parts[2]);
  return { script, keys: parts.slice(3, 3 + n), args: parts.slice(3 + n) };
}

export const resp = {
  ok: (host: string, load = 0) => `*3\r\n$2\r\nOK\r\n$${Buffer.byteLength(host)}\r\n${host}\r\n$${String(load).length}\r\n${load}\r\n`,
  int: (n: number) => `:${n}\r\n`,
};

/** The answer a well-behaved Redis would give, good enough for calls the property does not vary. */
export function saneReply(c: ScriptCall | null): string {
  if (c?.script === "acquire" || c?.script === "charge") return resp.ok(HOSTS[0]);
  if (c?.script === "prefix" || c?.script === "inspect") return "*0\r\n";
  return resp.int(0);
}

/**
 * The reply to give a call: RESP bytes, null (network failure: its connection drops) or undefined
 * (never answered: the calls after it on its connection wait too, until the op timer fires).
 */
export type Answer = (c: RecordedRedisCall, sc: ScriptCall | null) => string | Buffer | null | undefined;

function isGrant(reply: string | Buffer): boolean {
  try {
    const v = parseReply(Buffer.from(reply));
    return Array.isArray(v) && v.length >= 2 && String(v[0]) === "OK";
  } catch { return false; }
}

export class FuzzHost {
  private h: TestHost | null = null;
  private seen = new WeakSet<RecordedRedisCall>();
  /** Connections with a call left unanswered: nothing after it on them can be answered. */
  private stalled = new WeakSet<RecordedRedisCall["connection"]>();
  /** How much of the host's redisHistory drain() has looked at. */
  private historyAt = 0;
  /** Lease id -> number of acquire / release calls naming it, over the current run. */
  acquired = new Map<string, number>();
  released = new Map<string, number>();
  /** Lease ids whose release got a definite answer (an integer: Redis ran it); any later release is a repeat. */
  settledRelease = new Set<string>();
  repeats: string[] = [];
  /** Lease ids whose acquire was answered with a well-formed OK (a lease exists in Redis). */
  granted = new Set<string>();
  /** Over the host's life: acquires sent and releases sent (shows the property exercised leases). */
  totals = { acquires: 0, grants: 0, releases: 0 };

  constructor(private readonly configuration: object, private readonly hostSpecs: HostSpec[] = HOSTS.map((address) => ({ address }))) {}

  async host(): Promise<TestHost> {
    if (this.h && !this.failure()) return this.h;
    this.h?.close();
    this.h = await TestHost.create({ wasm: WASM, configuration: this.configuration, clusters: { [CLUSTER]: this.hostSpecs, [METRICS_CLUSTER]: [] }, redisClusters: [REDIS_CLUSTER], logLevel: "warn" });
    this.historyAt = 0;
    if (!this.h.configured.every(Boolean)) throw new Error(`fuzz configuration refused: ${this.h.logMessages("warn").join(" | ")}`);
    return this.h;
  }

  /** The first VM failure (trap, abort, unreachable, proc_exit) since the host was created, or null. */
  failure(): string | null {
    const vm = this.h?.vms.find((v) => v.failed);
    return vm ? `VM ${vm.index} failed: ${vm.failureReason}` : null;
  }

  resetLedger(): void { this.acquired.clear(); this.released.clear(); this.granted.clear(); this.settledRelease.clear(); this.repeats = []; }

  /**
   * Answers the Redis calls not yet seen (and those they cause), at most `max` of them. Every call
   * sent counts in the ledger, also one that failed before it could be seen: a NetworkError drops
   * the connection and fails every call pending on it, and those its plugin callbacks send then
   * (host-test/README.md, Redis op timeout row).
   */
  drain(answer: Answer, max = 400): void {
    const h = this.h!;
    for (let n = 0; n < max;) {
      const fresh = h.redisHistory.slice(this.historyAt).filter((c) => !this.seen.has(c));
      this.historyAt = h.redisHistory.length;
      if (fresh.length === 0) return;
      for (const c of fresh) {
        n++;
        this.seen.add(c);
        const sc = scriptCall(c);
        const lease = sc?.args[0];
        if (sc && lease && ACQUIRING.has(sc.script)) { this.acquired.set(lease, (this.acquired.get(lease) ?? 0) + 1); this.totals.acquires++; }
        if (sc && lease && sc.script === "release") {
          this.released.set(lease, (this.released.get(lease) ?? 0) + 1);
          this.totals.releases++;
          if (this.settledRelease.has(lease)) this.repeats.push(`${lease}: released again after Redis ran its release`);
        }
        const r = answer(c, sc);
        if (c.settled) continue;
        // Never answered: Redis answers in order, so every later call on that connection waits
        // behind it (until the op timer drops the connection, or it drops).
        if (r === undefined) { this.stalled.add(c.connection); continue; }
        if (r === null) { c.fail(); continue; }
        if (this.stalled.has(c.connection)) continue;
        if (sc && lease && ACQUIRING.has(sc.script) && isGrant(r)) { this.granted.add(lease); this.totals.grants++; }
        if (sc && lease && sc.script === "release" && /^:-?\d+\r\n/.test(Buffer.from(r).toString("latin1"))) this.settledRelease.add(lease);
        c.reply(r);
      }
    }
  }

  /** Moves the manual clock in steps (ticks, renewals, callout timeouts), answering calls between steps. */
  advance(ms: number, answer: Answer, step = 1000): void {
    for (let done = 0; done < ms; done += step) {
      this.h!.advance(Math.min(step, ms - done));
      this.drain(answer);
    }
  }

  /**
   * Breaches of "released exactly once": a granted lease never released, a release of a lease never
   * acquired, a release repeated after Redis ran one (a release refused by NOSCRIPT or lost on the
   * wire may be re-sent: it did not run, or running it twice changes nothing in Redis).
   */
  leaseViolations(): string[] {
    const bad = [...this.repeats];
    for (const id of this.granted) if (!this.released.has(id)) bad.push(`${id}: granted but never released`);
    for (const id of this.released.keys()) if (!this.acquired.has(id)) bad.push(`${id}: released but never acquired`);
    return bad;
  }

  close(): void { this.h?.close(); this.h = null; }
}

/** How a request ended as far as the plugin is concerned: forwarded (pick or fallback) or a local reply. */
export function outcome(s: TestStream): { forwarded: boolean; localStatus: number | null } {
  return { forwarded: s.forwarded !== null, localStatus: s.localResponse?.status ?? null };
}
