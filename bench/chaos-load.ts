// Chaos load for the chaos test and `npm run soak`: closed-loop streaming chat clients spread over
// gateways, with injected client aborts and upstream resets, a classification of every ending
// (a request "failed by the plugin" is one without an injected fault, sent to a live gateway, that
// did not complete with 200), and the shared counts read from Redis (load sum, lease count) to
// measure drift and the time back to exact counts after a fault.
// Failure behaviour: network errors are results, never exceptions.
import http from "node:http";
import { Redis } from "ioredis";
import { MODEL_CLUSTER, ROUTE_NAME } from "../host-test/local-stack.js";

export interface Target { url: string; alive: boolean }

export interface ChaosLoadOptions {
  targets: Target[];
  concurrency: number;
  /** Share of requests the client abandons mid-stream / the upstream resets mid-stream. */
  abortRate: number;
  resetRate: number;
  /** Output tokens per request, drawn uniformly in [min, max]. */
  tokens: [number, number];
  model?: string;
}

export interface ChaosTally {
  sent: number;
  completed: number;
  abortedByClient: number;
  resetByUpstream: number;
  /** Ended by a killed gateway (connection refused or cut). */
  gatewayDown: number;
  /**
   * 503 from the gateway's router because the upstream connection was closed before
   * response headers (Envoy's UC reply, e.g. a pooled keep-alive connection the pod closed as
   * it was reused): the transport's, not the plugin's.
   */
  upstreamConnection: number;
  pluginFailed: number;
  failures: string[];
}

type Fault = "none" | "abort" | "reset";

export class ChaosLoad {
  readonly tally: ChaosTally = { sent: 0, completed: 0, abortedByClient: 0, resetByUpstream: 0, gatewayDown: 0, upstreamConnection: 0, pluginFailed: 0, failures: [] };
  inFlight = 0;
  private running = false;
  private loops: Promise<void>[] = [];
  private next = 0;

  constructor(private readonly o: ChaosLoadOptions, private readonly rnd: () => number = Math.random) {}

  start(): void {
    this.running = true;
    for (let i = 0; i < this.o.concurrency; i++) this.loops.push(this.loop());
  }

  /** Stops issuing requests and waits for those in flight. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    this.loops = [];
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const live = this.o.targets.filter((t) => t.alive);
      const target = live.length ? live[this.next++ % live.length] : null;
      if (!target) { await sleep(20); continue; }
      const r = this.rnd();
      await this.one(target, r < this.o.abortRate ? "abort" : r < this.o.abortRate + this.o.resetRate ? "reset" : "none");
    }
  }

  /** One request; its ending goes into the tally. */
  async one(target: Target, fault: Fault): Promise<void> {
    const [lo, hi] = this.o.tokens;
    const tokens = lo + Math.floor(this.rnd() * (hi - lo + 1));
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (fault === "reset") headers["x-sim-reset-after"] = String(1 + Math.floor(tokens / 2));
    this.tally.sent++;
    this.inFlight++;
    const ended = await streamChat(target.url, this.o.model ?? "sim-tiny", tokens, headers, fault === "abort" ? 10 + Math.floor(this.rnd() * 100) : null);
    this.inFlight--;
    if (fault === "abort") this.tally.abortedByClient++;
    else if (fault === "reset") this.tally.resetByUpstream++;
    else if (ended.status === 200 && ended.complete) this.tally.completed++;
    else if (!target.alive) this.tally.gatewayDown++;
    else if (ended.status === 503 && ended.body?.startsWith("upstream connect error or disconnect/reset before headers. reset reason: connection termination")) this.tally.upstreamConnection++;
    else {
      this.tally.pluginFailed++;
      if (this.tally.failures.length < 20) this.tally.failures.push(`${new Date().toISOString()} ${target.url}: status ${ended.status} ${ended.complete ? "complete" : "cut"} ${ended.error ?? ""} ${ended.body ?? ""}`.trim());
    }
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A streaming chat request; abortAfterMs destroys it from the client side after that long. */
export interface Ending { status: number; complete: boolean; error?: string; /** Start of a non-200 body. */ body?: string }

export function streamChat(url: string, model: string, maxTokens: number, headers: Record<string, string>, abortAfterMs: number | null = null): Promise<Ending> {
  return new Promise((resolve) => {
    let settled = false;
    let head = "";
    const done = (v: Ending) => { if (!settled) { settled = true; resolve(head ? { ...v, body: head } : v); } };
    const body = JSON.stringify({ model, messages: [{ role: "user", content: "chaos" }], max_tokens: maxTokens, ignore_eos: true, stream: true });
    const req = http.request(`${url}/v1/chat/completions`, { method: "POST", agent: false, headers }, (res) => {
      res.on("data", (c: Buffer) => { if (res.statusCode !== 200 && head.length < 200) head += c.toString("utf8").slice(0, 200 - head.length); });
      res.on("end", () => done({ status: res.statusCode ?? 0, complete: res.complete }));
      res.on("error", (e) => done({ status: res.statusCode ?? 0, complete: false, error: e.message }));
      res.on("close", () => done({ status: res.statusCode ?? 0, complete: res.complete }));
    });
    req.on("error", (e) => done({ status: 0, complete: false, error: e.message }));
    if (abortAfterMs !== null) setTimeout(() => req.destroy(), abortAfterMs);
    req.end(body);
  });
}

/** The shared counts as Redis holds them for the stack's route and model cluster. */
export class SharedCounts {
  readonly redis: Redis;
  private readonly ns = `{llmlb:${ROUTE_NAME}:${MODEL_CLUSTER}}`;
  constructor(url: string) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
    this.redis.on("error", () => {}); // outages are on purpose
  }
  /**
   * Sum of the per-host in-flight counts, the smallest of them (negative = a release of a lease
   * Redis did not hold was counted) and the number of leases; null while Redis does not answer.
   */
  async read(): Promise<{ load: number; leases: number; min: number } | null> {
    try {
      const [flat, leases] = await Promise.all([this.redis.zrange(`${this.ns}:load`, 0, -1, "WITHSCORES"), this.redis.zcard(`${this.ns}:leases`)]);
      let load = 0;
      let min = 0;
      for (let i = 1; i < flat.length; i += 2) { load += Number(flat[i]); min = Math.min(min, Number(flat[i])); }
      return { load, leases, min };
    } catch {
      return null;
    }
  }
  close(): void { this.redis.disconnect(); }
}

/**
 * With no client request in flight, the time from `since` until Redis holds exact counts (load 0,
 * no lease), while a trickle of short probe requests goes on (real traffic does not stop for a
 * fault; a probe is awaited before each reading, so none is in flight when the counts are read).
 * Null: not reached by since + limitMs.
 */
export async function timeToExact(counts: SharedCounts, probeUrl: () => string, since: number, limitMs: number): Promise<number | null> {
  let last: Awaited<ReturnType<SharedCounts["read"]>> = null;
  while (Date.now() - since <= limitMs) {
    const c = await counts.read();
    if (c) last = c;
    if (c && c.load === 0 && c.leases === 0) return Date.now() - since;
    await streamChat(probeUrl(), "sim-tiny", 1, { "content-type": "application/json" });
    // The gateway releases a lease after the client has its last byte (on_log, then a Redis call):
    // on a busy machine that takes longer than a few ms, so the next reading waits for it.
    await sleep(200);
  }
  console.warn(`counts not exact ${limitMs} ms after the fault: last reading ${JSON.stringify(last)}`);
  return null;
}
