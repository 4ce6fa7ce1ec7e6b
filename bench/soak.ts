// `npm run soak`: a long chaos run through real gateways, real Redis and the simulated pods, then
// the fuzz properties with many more runs. Load: closed-loop streaming clients over >= 4 gateways
// (G-1 in-process x 2 VMs + 1 gateway process), with client aborts and upstream resets. Faults, at
// fixed shares of the run: Redis frozen (SIGSTOP 3 s), Redis killed and restarted, the gateway
// process killed (SIGKILL), then restarted, Redis frozen again. Reports: requests by ending, failed
// by the plugin (must be 0), max drift of the shared count (|Redis load sum - requests held by the
// pods|, sampled every 100 ms) overall and outside fault windows, and for each fault the time from
// its end to exact counts (clients paused, probes trickling; see bench/chaos-load.ts).
// Options: --requests N (default 100000), --gateways G (default 4, >= 2), --concurrency C (64),
// --lease-ttl S (2), --fuzz-runs N (5000; 0 skips the fuzz part), --json FILE.
// Exit status 1 when a request was failed by the plugin, counts were not exact in time, or fuzz failed.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startLocalStack, spawnGatewayProcess, redisLbConfig, type GatewayProcess } from "../host-test/local-stack.js";
import { ChaosLoad, SharedCounts, sleep, timeToExact, type ChaosTally, type Target } from "./chaos-load.js";
import { REPO_ROOT } from "./topology.js";

function args(argv: string[]) {
  const o = { requests: 100_000, gateways: 4, concurrency: 64, leaseTtl: 2, fuzzRuns: 5000, json: null as string | null };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    const n = Number(v);
    if (argv[i] === "--json") { o.json = v ?? null; i++; continue; }
    const key = ({ "--requests": "requests", "--gateways": "gateways", "--concurrency": "concurrency", "--lease-ttl": "leaseTtl", "--fuzz-runs": "fuzzRuns" } as const)[argv[i] as "--requests"];
    if (!key || !Number.isFinite(n) || n < 0) throw new Error(`unknown option or bad value: ${argv[i]} ${v ?? ""}`);
    o[key] = n;
    i++;
  }
  if (o.gateways < 2) throw new Error("--gateways must be >= 2 (one of them is killed)");
  return o;
}

const o = args(process.argv.slice(2));
const plugin = (port: number) => ({ lb_policy: "global_least_request", lb_config: { ...redisLbConfig(port), leaseTTL: o.leaseTtl, failurePenalty: 0 } });
const gatewayHealMs = o.leaseTtl * 1000 + 1000;
const redisHealMs = 2000 + gatewayHealMs;
const dir = mkdtempSync(path.join(os.tmpdir(), "llmlb-soak-"));
const t0 = Date.now();
const stack = await startLocalStack({ pods: 8, gateways: o.gateways - 1, workers: 2, fleet: { profile: "tiny", timeScale: 1, profileOverrides: { stepBaseMs: 5 } }, plugin });
let proc: GatewayProcess = await spawnGatewayProcess(stack, plugin(stack.redis.port), dir);
const counts = new SharedCounts(stack.redis.url);
const targets: Target[] = [...stack.gateways.map((g) => ({ url: g.url, alive: true })), { url: proc.url, alive: true }];
const tallies: ChaosTally[] = [];
let load: ChaosLoad | null = null;
const startLoad = () => { load = new ChaosLoad({ targets, concurrency: o.concurrency, abortRate: 0.05, resetRate: 0.05, tokens: [1, 6] }); load.start(); };
const stopLoad = async () => { if (load) { await load.stop(); tallies.push(load.tally); load = null; } };
const sent = () => tallies.reduce((n, t) => n + t.sent, 0) + (load?.tally.sent ?? 0);

// Drift sampler: Redis's view against what the pods actually hold.
let inFault = false;
const drift = { max: 0, maxSteady: 0, samples: 0 };
const sampler = setInterval(() => {
  void counts.read().then((c) => {
    if (!c) return;
    const held = stack.fleet.pods.reduce((n, p) => { const s = p.engine.snapshot(); return n + s.running + s.waiting; }, 0);
    const d = Math.abs(c.load - held);
    drift.samples++;
    drift.max = Math.max(drift.max, d);
    if (!inFault) drift.maxSteady = Math.max(drift.maxSteady, d);
  });
}, 100);

interface FaultResult { fault: string; atRequest: number; msToExact: number | null; limitMs: number }
const faults: FaultResult[] = [];
const FAULTS: Array<{ at: number; name: string; limit: number; run: () => Promise<void> }> = [
  { at: 0.15, name: "Redis frozen 3 s (SIGSTOP/SIGCONT)", limit: redisHealMs, run: async () => { stack.redis.pause(); await sleep(3000); stack.redis.resume(); } },
  { at: 0.35, name: "Redis killed, restarted after 1 s", limit: redisHealMs, run: async () => { await stack.redis.stop(); await sleep(1000); await stack.redis.start(); } },
  { at: 0.55, name: "gateway process killed (SIGKILL)", limit: gatewayHealMs, run: async () => { targets[targets.length - 1].alive = false; await proc.kill(); } },
  { at: 0.7, name: "gateway process restarted", limit: gatewayHealMs, run: async () => {
    proc = await spawnGatewayProcess(stack, plugin(stack.redis.port), dir, "gw-restarted");
    targets[targets.length - 1] = { url: proc.url, alive: true };
  } },
  { at: 0.85, name: "Redis frozen 3 s again", limit: redisHealMs, run: async () => { stack.redis.pause(); await sleep(3000); stack.redis.resume(); } },
];

startLoad();
let lastPrint = 0;
for (const f of FAULTS) {
  while (sent() < f.at * o.requests) {
    await sleep(100);
    if (Date.now() - lastPrint > 10_000) { lastPrint = Date.now(); process.stderr.write(`soak: ${sent()} / ${o.requests} requests, ${Math.round((Date.now() - t0) / 1000)} s\n`); }
  }
  const atRequest = sent();
  inFault = true;
  await f.run();
  const end = Date.now();
  await sleep(500);
  await stopLoad();
  const ms = await timeToExact(counts, () => targets[0].url, end, Math.max(f.limit, 30_000));
  inFault = false;
  faults.push({ fault: f.name, atRequest, msToExact: ms, limitMs: f.limit });
  process.stderr.write(`soak: ${f.name} at request ${atRequest}: exact counts ${ms} ms after its end\n`);
  startLoad();
}
while (sent() < o.requests) await sleep(100);
await stopLoad();
clearInterval(sampler);
const final = await timeToExact(counts, () => targets[0].url, Date.now(), gatewayHealMs);

const total = (k: keyof Omit<ChaosTally, "failures">) => tallies.reduce((n, t) => n + t[k], 0);
const report = {
  command: `npm run soak -- ${process.argv.slice(2).join(" ")}`.trim(),
  machine: `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`,
  wallSeconds: Math.round((Date.now() - t0) / 1000),
  gateways: o.gateways, concurrency: o.concurrency, leaseTtlS: o.leaseTtl,
  requests: { sent: total("sent"), completed: total("completed"), abortedByClient: total("abortedByClient"), resetByUpstream: total("resetByUpstream"), cutByKilledGateway: total("gatewayDown"), upstreamConnectionReset: total("upstreamConnection"), failedByPlugin: total("pluginFailed") },
  failures: tallies.flatMap((t) => t.failures).slice(0, 20),
  drift: { maxDuringRun: drift.max, maxOutsideFaults: drift.maxSteady, samples: drift.samples },
  faults, finalExactMs: final,
};
console.log(JSON.stringify(report, null, 2));
if (o.json) writeFileSync(o.json, JSON.stringify(report, null, 2));
counts.close();
await proc.kill();
await stack.close();
rmSync(dir, { recursive: true, force: true });

let ok = report.requests.failedByPlugin === 0 && final !== null && faults.every((f) => f.msToExact !== null && f.msToExact <= f.limitMs);
if (o.fuzzRuns > 0) {
  const fuzz = spawnSync(process.execPath, [path.join(REPO_ROOT, "node_modules/vitest/vitest.mjs"), "run", "test/fuzz"], { cwd: REPO_ROOT, stdio: "inherit", env: { ...process.env, FUZZ_RUNS: String(o.fuzzRuns) } });
  ok = ok && fuzz.status === 0;
}
process.exit(ok ? 0 : 1);
