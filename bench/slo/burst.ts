// Overload burst (Photoroom's case), queueing vs shedding: 2 pods (llama-8b-h100, 2 batch slots a
// pod), two tenants (A offers 3/4 of the requests, B 1/4). Shape (virtual time, default): 5 s at
// 2x the fleet's measured capacity C, then 15 s at C/2, so the backlog of the burst (about 5 x C
// requests) drains within the max wait; `--find-capacity` measures C. Shedding =
// global_least_request with maxRequestCount 2 (429 when every pod is full); queueing = the same
// with queueCapacity 4 (the fleet's batch slots), waiting up to queueMaxWaitMs 15000, fair between
// tenants by x-tenant. Reports failed requests, wait (TTFT) p50/p99 of served requests, and each
// tenant's served share against the max-min fair share.
// Run: npm run bench -- slo-burst [--rate C] [--burst-seconds 5] [--seeds 3,4] [--poll-ms 20]
// [--gateways 1] [--wall]. With several gateways requests go round robin over them, so a freed
// slot's head is often held by another gateway (taken at its next poll). Wall mode:
// the old shape (10 s at 2 x rate, 10 s at rate / 2) through the real local gateway.
import http from "node:http";
import { SeededRandom } from "../../host-test/sim/random.js";
import { randomWords } from "../workloads/text.js";
import { startTopology } from "../topology.js";
import { pct, served, sloRequest } from "./client.js";
import { clientTimes, runSloJobs, saturatedThroughput, type SloFleet } from "./virtual-run.js";

const TOPOLOGY = { pods: 2, profile: "llama-8b-h100", profileOverrides: { maxNumSeqs: 2 }, timeScale: 1, seed: 5, gateways: 1 };
const FLEET: SloFleet = { pods: 2, profile: "llama-8b-h100", profileOverrides: { maxNumSeqs: 2 } };
/** The fleet's capacity in virtual time (req/s, `--find-capacity`, bench/RESULTS.md section 12). */
export const BURST_CAPACITY = 17;

const MODES: Record<string, Record<string, unknown>> = {
  shedding: { maxRequestCount: 2 },
  queueing: { queueCapacity: 4, queueMaxWaitMs: 15000, queueTenantHeader: "x-tenant", queuePollMs: 20 },
};

interface Job { at: number; tenant: string; prompt: string }

function jobs(stages: Array<{ rate: number; ms: number }>, seed: number): Job[] {
  const rng = new SeededRandom(seed);
  const out: Job[] = [];
  let start = 0;
  for (const s of stages) {
    let t = start;
    while (true) {
      t += -Math.log(1 - rng.next()) / s.rate * 1000;
      if (t > start + s.ms) break;
      out.push({ at: t, tenant: rng.next() < 0.75 ? "A" : "B", prompt: randomWords(rng, 200) });
    }
    start += s.ms;
  }
  return out;
}

export interface Seen { status: number; error: string | null; waitMs: number }

export function row(mode: string, seed: number | string, list: Job[], results: Seen[]): string {
  const ok = results.filter(served);
  const waits = ok.map((r) => r.waitMs);
  const by = (t: string) => ({ offered: list.filter((j) => j.tenant === t).length, served: results.filter((r, i) => served(r) && list[i].tenant === t).length });
  const a = by("A"), b = by("B");
  // Max-min fair split of what was served: B (the smaller demand) gets min(its demand, half).
  const total = a.served + b.served;
  const fairB = Math.min(b.offered, total / 2);
  const fairA = total - fairB;
  const dev = Math.max(Math.abs(a.served - fairA) / fairA, Math.abs(b.served - fairB) / fairB);
  // Fair queueing: the tenant under its fair share (B) waits less than the one over it (A).
  const waitOf = (t: string) => pct(results.filter((r, i) => served(r) && list[i].tenant === t).map((r) => r.waitMs), 0.5).toFixed(0);
  return `| ${mode} | ${seed} | ${list.length} | ${list.length - ok.length} | ${pct(waits, 0.5).toFixed(0)} / ${pct(waits, 0.99).toFixed(0)} | ${waitOf("A")} / ${waitOf("B")} | A ${a.served}/${a.offered}, B ${b.served}/${b.offered} | ${(dev * 100).toFixed(1)}% |`;
}

const job = (j: Job) => ({ at: j.at, prompt: j.prompt, maxTokens: 32, headers: [["x-tenant", j.tenant]] as Array<[string, string]> });

async function runVirtual(mode: string, list: Job[], seed: number, gateways: number): Promise<string> {
  const run = await runSloJobs({ policy: "global_least_request", lbConfig: MODES[mode], fleet: FLEET, seed, jobs: list.map(job), drainMs: 60_000, gateways });
  const seen = run.outcomes.map((o, i) => {
    const t = clientTimes(o, run.starts[i]);
    return { status: o.status, error: o.error, waitMs: t.ttft ?? o.endMs - run.starts[i] };
  });
  return row(mode, seed, list, seen);
}

async function runWall(mode: string, list: Job[]): Promise<string> {
  const topo = await startTopology(TOPOLOGY, "global_least_request", MODES[mode]);
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
    const url = `${topo.urls[0]}/v1/chat/completions`;
    const t0 = performance.now();
    const results = await Promise.all(list.map(async (j) => {
      const wait = j.at - (performance.now() - t0);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      return sloRequest(url, { messages: [{ role: "user", content: j.prompt }], max_tokens: 32, ignore_eos: true, stream: true }, { "x-tenant": j.tenant }, agent, 60_000);
    }));
    agent.destroy();
    return row(mode, "wall", list, results.map((r) => ({ status: r.status, error: r.error, waitMs: r.ttftMs ?? r.e2eMs })));
  } finally {
    await topo.close();
  }
}

function arg(args: string[], name: string, def: string): string {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
}

export async function burstMain(args: string[]): Promise<void> {
  const wall = args.includes("--wall");
  const seeds = arg(args, "--seeds", "3,4").split(",").map(Number);
  if (args.includes("--find-capacity")) {
    for (const seed of seeds) {
      const list = jobs([{ rate: 60, ms: 30_000 }], seed).map(job);
      console.log(`seed ${seed}: capacity ${(await saturatedThroughput(FLEET, list, seed, 5000, 30_000)).toFixed(2)} req/s`);
    }
    return;
  }
  const rate = Number(arg(args, "--rate", wall ? "16" : String(BURST_CAPACITY)));
  // The slot hand-off: a freed slot goes to the head at once; a head held by another gateway
  // takes it at its next poll (queuePollMs).
  MODES.queueing.queuePollMs = Number(arg(args, "--poll-ms", "20"));
  const gateways = Number(arg(args, "--gateways", "1"));
  const burstMs = Number(arg(args, "--burst-seconds", "5")) * 1000;
  const stages = wall ? [{ rate: 2 * rate, ms: 10_000 }, { rate: rate / 2, ms: 10_000 }] : [{ rate: 2 * rate, ms: burstMs }, { rate: rate / 2, ms: 20_000 - burstMs }];
  console.log(`${wall ? "wall clock" : "virtual time"}: ${stages.map((s) => `${s.rate} req/s for ${s.ms / 1000} s`).join(", then ")}`);
  console.log("| mode | seed | requests | failed | wait (TTFT) p50 / p99 ms | wait p50 A / B ms | served / offered per tenant | max deviation from fair share |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const seed of wall ? [3] : seeds) {
    const list = jobs(stages, seed);
    for (const m of Object.keys(MODES)) console.log(wall ? await runWall(m, list) : await runVirtual(m, list, seed, gateways));
  }
}

if (process.argv[1]?.endsWith("burst.ts")) burstMain(process.argv.slice(2)).catch((e) => { console.error(e); process.exit(1); });
