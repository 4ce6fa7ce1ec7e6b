// Redis outages under load through the local gateway (issue 11's goal): 2 gateways x 2 VMs, real
// Redis, simulated pods, an open-loop stream of short streaming requests at a steady rate; then
// (a) Redis frozen by SIGSTOP for `outage` s then SIGCONT, (b) Redis killed (SIGKILL), down for
// `outage` s, restarted empty on the same port. Per fault and phase (before / during / after, by
// request start): requests, failed (any ending but a complete 200), time to first token
// p50/p99/max, and the added p99 while down (during minus before); the picks that waited for Redis
// at all during the outage (pick deadline misses); the time from Redis's return to the first pick
// served through Redis again (debug header) and until every VM's breaker is closed (all back);
// the time from its return until the shared count is exact under load (|Redis load sum - requests
// the pods hold| back within the largest drift seen before the fault, and staying there) against
// one leaseTTL; and, once the load stops, the time to load 0 with no lease left. A third gateway
// without the plugin on the same pods gets a third of the requests: its p99 in the same window is
// the control, so "added p99 vs control" cancels the noise of a shared machine.
// Usage: npm run bench -- redis-outage [--outage S=30] [--rate R=75 (total; 2/3 through the plugin)]
//   [--lease-ttl S=2] [--json FILE]
import http from "node:http";
import os from "node:os";
import { writeFileSync } from "node:fs";
import { startLocalStack, redisLbConfig, localGatewayConfig, type LocalStack } from "../host-test/local-stack.js";
import { startGateway, type Gateway } from "../host-test/gateway/server.js";
import { SharedCounts, sleep } from "./chaos-load.js";
import { nearestRank } from "./metrics.js";

export interface OutageOptions { outageS: number; rate: number; leaseTtlS: number; beforeS: number; afterS: number; json: string | null }

interface Req { control: boolean; start: number; ttft: number; status: number; complete: boolean; reason: string; headersAt: number; error?: string; /** Start of a non-200 body. */ body?: string }

const DEBUG_HEADER = "x-llmlb-debug";

/** One short streaming chat; ttft = ms to the first body chunk. Network errors are results. */
function one(url: string, control: boolean): Promise<Req> {
  return new Promise((resolve) => {
    const start = Date.now();
    const t0 = performance.now();
    const r: Req = { control, start, ttft: NaN, status: 0, complete: false, reason: "", headersAt: NaN };
    let settled = false;
    const done = () => { if (!settled) { settled = true; resolve(r); } };
    const body = JSON.stringify({ model: "sim-tiny", messages: [{ role: "user", content: "outage" }], max_tokens: 2 + Math.floor(Math.random() * 5), ignore_eos: true, stream: true });
    const req = http.request(`${url}/v1/chat/completions`, { method: "POST", agent: false, headers: { "content-type": "application/json" } }, (res) => {
      r.status = res.statusCode ?? 0;
      r.headersAt = Date.now();
      const dbg = String(res.headers[DEBUG_HEADER] ?? "");
      r.reason = /reason=([^;]*)/.exec(dbg)?.[1] ?? "";
      res.on("data", (c: Buffer) => {
        if (Number.isNaN(r.ttft)) r.ttft = performance.now() - t0;
        if (r.status !== 200 && (r.body ?? "").length < 160) r.body = (r.body ?? "") + c.toString("utf8").slice(0, 160);
      });
      res.on("end", () => { r.complete = res.complete; done(); });
      res.on("error", (e) => { r.error = e.message; done(); });
      res.on("close", () => { r.complete = res.complete; done(); });
    });
    req.on("error", (e) => { r.error = e.message; done(); });
    req.end(body);
  });
}

/** Open loop: `rate` requests per second spread over the gateways until stop(). */
class OpenLoop {
  readonly done: Req[] = [];
  private readonly inflight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  /** control: a gateway without the plugin, on the same pods, sent the same share of the load. */
  constructor(private readonly urls: string[], private readonly control: string, private readonly rate: number) {}
  start(): void {
    let i = 0;
    const t0 = performance.now();
    const tick = () => {
      const due = Math.floor(((performance.now() - t0) / 1000) * this.rate);
      while (i < due) {
        const k = i++ % (this.urls.length + 1);
        const p = one(k < this.urls.length ? this.urls[k] : this.control, k === this.urls.length).then((r) => { this.done.push(r); this.inflight.delete(p); });
        this.inflight.add(p);
      }
    };
    this.timer = setInterval(tick, 5);
  }
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await Promise.all([...this.inflight]);
  }
}

const q = nearestRank;

/**
 * 503 from the gateway's router because a pooled upstream keep-alive connection was closed by the
 * pod before response headers (Envoy's UC reply): the transport's, not the plugin's (chaos-load.ts).
 */
const isTransport = (r: Req) => r.status === 503 && (r.body ?? "").startsWith("upstream connect error or disconnect/reset before headers. reset reason: connection termination");
const succeeded = (r: Req) => r.status === 200 && r.complete;

export interface PhaseStats { requests: number; failed: number; transport: number; p50: number; p99: number; max: number; fallbacks: number; controlP99: number }
function phase(all: Req[]): PhaseStats {
  const rs = all.filter((r) => !r.control);
  const ct = all.filter((r) => r.control && succeeded(r)).map((r) => r.ttft).filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  const ok = rs.filter(succeeded);
  const t = ok.map((r) => r.ttft).filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  const transport = rs.filter(isTransport).length;
  return { requests: rs.length, failed: rs.length - ok.length - transport, transport, p50: q(t, 0.5), p99: q(t, 0.99), max: q(t, 1), fallbacks: rs.filter((r) => r.reason === "local_fallback").length, controlP99: q(ct, 0.99) };
}

export interface FaultResult {
  fault: string; before: PhaseStats; during: PhaseStats; after: PhaseStats; addedP99: number;
  /** The same, each p99 taken relative to the plugin-less control gateway's in the same window (machine noise cancels). */
  addedP99VsControl: number;
  firstRedisPickMs: number | null; allBackMs: number | null; fallbacksAfter2s: number; deadlineMisses: number; overdue: number; exactUnderLoadMs: number | null;
  driftBefore: number; minLoad: number; exactAfterStopMs: number | null; leaseTtlMs: number; failures: string[];
  /** Drift samples from 1 s before the return to the end (ms from the return, drift; -1 = no reading), for the JSON. */
  driftTrace: Array<[number, number]>; fallbackPicksAfterMs: number[];
  /** Requests slower than the before-phase max: [ms from the fault's start, TTFT, reason], for the JSON. */
  slow: Array<[number, number, string]>;
}

/** |Redis load sum - requests the pods hold|, sampled every 100 ms (null while Redis is away). */
class DriftSampler {
  readonly samples: Array<{ t: number; d: number | null }> = [];
  /** The smallest per-host count Redis held (below 0: a release was counted twice or for a lost lease). */
  minLoad = 0;
  private timer: NodeJS.Timeout | null = null;
  constructor(private readonly stack: LocalStack, private readonly counts: SharedCounts) {}
  start(): void {
    this.timer = setInterval(() => {
      const t = Date.now();
      void this.counts.read().then((c) => {
        const held = this.stack.fleet.pods.reduce((n, p) => { const s = p.engine.snapshot(); return n + s.running + s.waiting; }, 0);
        this.samples.push({ t, d: c ? Math.abs(c.load - held) : null });
        if (c) this.minLoad = Math.min(this.minLoad, c.min);
      });
    }, 100);
  }
  stop(): void { if (this.timer) clearInterval(this.timer); }
}

/** Metrics of the plugin summed over the gateways (each in-process gateway shares its VMs' stats). */
function metricSum(stack: LocalStack, name: string, labels: Record<string, string> = {}): number {
  return stack.gateways.reduce((n, g) => { const v = g.plugin?.metrics.valueOf(name, labels); return n + (typeof v === "number" ? v : 0); }, 0);
}
const misses = (stack: LocalStack) => metricSum(stack, "llmlb_redis_failures_total", { kind: "pick_deadline" });
const overdues = (stack: LocalStack) => metricSum(stack, "llmlb_redis_failures_total", { kind: "overdue" });

/** Samples the open breakers (all VMs) every 20 ms: the first time after `since` they are all closed. */
async function allClosedAfter(stack: LocalStack, since: number, until: number): Promise<number | null> {
  while (Date.now() < until) {
    if (metricSum(stack, "llmlb_redis_breakers_open") === 0) return Date.now() - since;
    await sleep(20);
  }
  return null;
}

async function runFault(stack: LocalStack, control: Gateway, o: OutageOptions, name: string, down: () => Promise<void>, up: () => Promise<void>): Promise<FaultResult> {
  const counts = new SharedCounts(stack.redis.url);
  const loop = new OpenLoop(stack.gateways.map((g) => g.url), control.url, o.rate);
  const drift = new DriftSampler(stack, counts);
  loop.start();
  await sleep(2000); // warm up (not counted)
  drift.start();
  const t0 = Date.now();
  await sleep(o.beforeS * 1000);
  const downAt = Date.now();
  const [missesBefore, overdueBefore] = [misses(stack), overdues(stack)];
  await down();
  await sleep(o.outageS * 1000);
  const [missesDuring, overdueDuring] = [misses(stack) - missesBefore, overdues(stack) - overdueBefore];
  await up();
  const upAt = Date.now();
  const allBack = await allClosedAfter(stack, upAt, upAt + o.afterS * 1000);
  await sleep(Math.max(0, upAt + o.afterS * 1000 - Date.now()));
  await loop.stop();
  const stoppedAt = Date.now();
  drift.stop();
  const exactAfterStop = await timeToIdle(counts, stoppedAt, 10_000);
  counts.close();

  const all = loop.done.filter((r) => r.start >= t0);
  const rs = all.filter((r) => !r.control);
  const before = phase(all.filter((r) => r.start < downAt));
  const during = phase(all.filter((r) => r.start >= downAt && r.start < upAt));
  const after = phase(all.filter((r) => r.start >= upAt));
  const viaRedis = rs.filter((r) => r.headersAt >= upAt && r.status === 200 && r.reason !== "" && r.reason !== "local_fallback").map((r) => r.headersAt);
  const fallbacksAfter = rs.filter((r) => r.start >= upAt && r.reason === "local_fallback").map((r) => r.start);
  const driftBefore = Math.max(0, ...drift.samples.filter((s) => s.t < downAt && s.d !== null).map((s) => s.d!));
  // Exact under load: the first sample after Redis's return from which every sample is within the drift seen before.
  const afterSamples = drift.samples.filter((s) => s.t >= upAt).sort((a, b) => a.t - b.t);
  let exactAt: number | null = null;
  for (const s of afterSamples) {
    if (s.d === null || s.d > driftBefore) exactAt = null;
    else if (exactAt === null) exactAt = s.t;
  }
  return {
    fault: name, before, during, after, addedP99: during.p99 - before.p99,
    addedP99VsControl: (during.p99 - during.controlP99) - (before.p99 - before.controlP99),
    firstRedisPickMs: viaRedis.length ? Math.min(...viaRedis) - upAt : null,
    allBackMs: allBack, fallbacksAfter2s: fallbacksAfter.filter((t) => t >= upAt + 2000).length,
    deadlineMisses: missesDuring, overdue: overdueDuring,
    exactUnderLoadMs: exactAt === null ? null : Math.max(0, exactAt - upAt), driftBefore, minLoad: drift.minLoad,
    exactAfterStopMs: exactAfterStop, leaseTtlMs: o.leaseTtlS * 1000,
    slow: rs.filter((r) => r.start >= downAt && r.ttft > before.max).map((r) => [r.start - downAt, Math.round(r.ttft), r.reason]),
    driftTrace: drift.samples.filter((s) => s.t >= upAt - 1000).sort((a, b) => a.t - b.t).map((s) => [s.t - upAt, s.d ?? -1]),
    fallbackPicksAfterMs: fallbacksAfter.map((t) => t - upAt).sort((a, b) => a - b),
    failures: rs.filter((r) => !succeeded(r) && !isTransport(r)).slice(0, 10).map((r) => `${new Date(r.start).toISOString()} status ${r.status} ${r.complete ? "complete" : "cut"} ${r.error ?? ""} ${r.body ?? ""}`.trim()),
  };
}

/** Once no request is in flight: ms from `since` until Redis holds load 0 and no lease (null: not by limitMs). */
async function timeToIdle(counts: SharedCounts, since: number, limitMs: number): Promise<number | null> {
  while (Date.now() - since <= limitMs) {
    const c = await counts.read();
    if (c && c.load === 0 && c.leases === 0) return Date.now() - since;
    await sleep(50);
  }
  return null;
}

const f1 = (x: number | null) => x === null ? "never" : Number.isFinite(x) ? x.toFixed(1) : "-";
const ms0 = (x: number | null) => x === null ? "never" : String(Math.round(x));

export function outageTable(rs: FaultResult[]): string {
  const lines = [
    "| fault | phase | requests | failed by the plugin | 503 UC (transport) | fallback picks | TTFT p50 / p99 / max (ms) | control p99 (ms) |",
    "|---|---|---:|---:|---:|---:|---|---:|",
  ];
  for (const r of rs) for (const [p, s] of [["before", r.before], ["during", r.during], ["after", r.after]] as const) {
    lines.push(`| ${r.fault} | ${p} | ${s.requests} | ${s.failed} | ${s.transport} | ${s.fallbacks} | ${f1(s.p50)} / ${f1(s.p99)} / ${f1(s.max)} | ${f1(s.controlP99)} |`);
  }
  lines.push("", "| fault | added p99 while down (ms; vs control) | picks that waited the deadline / fell back at once (overdue) | first pick via Redis after return (ms) | all VMs back on Redis (ms) | fallback picks > 2 s after return | exact under load after return (ms) | load 0, no lease once the load stops (ms) | leaseTTL (ms) | smallest per-host count |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rs) lines.push(`| ${r.fault} | ${f1(r.addedP99)} (${f1(r.addedP99VsControl)}) | ${r.deadlineMisses} / ${r.overdue} | ${ms0(r.firstRedisPickMs)} | ${ms0(r.allBackMs)} | ${r.fallbacksAfter2s} | ${ms0(r.exactUnderLoadMs)} (drift <= ${r.driftBefore}) | ${ms0(r.exactAfterStopMs)} | ${r.leaseTtlMs} | ${r.minLoad} |`);
  return lines.join("\n");
}

export function parseOutageArgs(argv: string[]): OutageOptions {
  const o: OutageOptions = { outageS: 30, rate: 75, leaseTtlS: 2, beforeS: 10, afterS: 10, json: null };
  const keys: Record<string, keyof OutageOptions> = { "--outage": "outageS", "--rate": "rate", "--lease-ttl": "leaseTtlS", "--before": "beforeS", "--after": "afterS" };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--json") { o.json = argv[++i] ?? null; continue; }
    const k = keys[argv[i]];
    const n = Number(argv[i + 1]);
    if (!k || !(n > 0)) throw new Error(`redis-outage: unknown option or bad value: ${argv[i]} ${argv[i + 1] ?? ""}`);
    (o as unknown as Record<string, number>)[k] = n;
    i++;
  }
  return o;
}

export async function runRedisOutage(o: OutageOptions): Promise<FaultResult[]> {
  const plugin = (port: number) => ({ lb_policy: "global_least_request", lb_config: { ...redisLbConfig(port), leaseTTL: o.leaseTtlS, failurePenalty: 0, debugHeader: DEBUG_HEADER } });
  const stack = await startLocalStack({ pods: 4, gateways: 2, workers: 2, fleet: { profile: "tiny", timeScale: 1, profileOverrides: { stepBaseMs: 5 } }, plugin });
  let control: Gateway | null = null;
  try {
    control = await startGateway(localGatewayConfig({ endpoints: stack.fleet.pods.map((p) => `${p.host}:${p.port}`), redisPort: stack.redis.port, plugin: null, workers: 2, healthCheckMs: 1000, listenPort: 0, adminPort: null }));
    const out: FaultResult[] = [];
    out.push(await runFault(stack, control, o, `Redis frozen ${o.outageS} s (SIGSTOP)`, async () => stack.redis.pause(), async () => stack.redis.resume()));
    out.push(await runFault(stack, control, o, `Redis killed, ${o.outageS} s down, restarted`, () => stack.redis.stop(), () => stack.redis.start()));
    return out;
  } finally {
    await control?.close();
    await stack.close();
  }
}

export async function main(argv: string[]): Promise<void> {
  const o = parseOutageArgs(argv);
  const t0 = Date.now();
  const rs = await runRedisOutage(o);
  console.log(`redis-outage: 2 gateways x 2 VMs, 4 simulated pods, real Redis, ${o.rate} req/s open loop (2-6 output tokens, streaming; a third to a plugin-less control gateway), leaseTTL ${o.leaseTtlS} s, pickDeadlineMs 50 (default), Redis timeout 1000 ms`);
  console.log(`machine: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}; ${Math.round((Date.now() - t0) / 1000)} s wall\n`);
  console.log(outageTable(rs));
  for (const r of rs) if (r.failures.length) console.log(`${r.fault}: failures ${r.failures.join("; ")}`);
  if (o.json) writeFileSync(o.json, JSON.stringify(rs, null, 1));
}
