// SLO routing on a heterogeneous fleet (llm-d's predicted-latency scenarios, scaled): 4 pods, two
// of them 2x slower (sim slowFactor 2), a mixed workload (half short prompt / long completion,
// half long prompt / short completion), each request with its own SLO class (half tight, half
// loose, like llm-d's per-request x-slo-* headers), Poisson arrivals at about 85% of the fleet's
// capacity. Compared: predicted_latency, endpoint_metrics (utilization scoring), prefix_cache.
// Reports SLO attainment, goodput, TTFT/TPOT p50/p90 and predicted_latency's TTFT prediction error.
// Run: npx tsx bench/slo/hetero.ts [--rate R] [--seconds S] [--policies a,b]. Times are wall ms =
// simulated ms (timeScale 1).
import http from "node:http";
import { SeededRandom } from "../../host-test/sim/random.js";
import { randomWords } from "../workloads/text.js";
import { startTopology } from "../topology.js";
import type { PolicyName } from "../policies.js";
import { pct, sloRequest, type SloResult } from "./client.js";

export const HETERO_TOPOLOGY = {
  pods: 4, profile: "llama-8b-h100", profileOverrides: { maxNumSeqs: 4 }, timeScale: 1, seed: 7, gateways: 1,
};

interface Job { at: number; prompt: string; maxTokens: number; slo: { ttft: number; tpot: number }; cls: string }

export function heteroJobs(rate: number, seconds: number, seed: number): Job[] {
  const rng = new SeededRandom(seed);
  const jobs: Job[] = [];
  let t = 0;
  while (true) {
    t += -Math.log(1 - rng.next()) / rate * 1000;
    if (t > seconds * 1000) break;
    const longPrompt = rng.next() < 0.5;
    const tight = rng.next() < 0.5;
    jobs.push({
      at: t,
      prompt: randomWords(rng, longPrompt ? 1500 : 100),
      maxTokens: longPrompt ? 16 : 96,
      // Tight: what a fast pod meets with room; loose: what a slow pod meets.
      slo: tight ? { ttft: 150, tpot: 11 } : { ttft: 600, tpot: 30 },
      cls: (longPrompt ? "long-prompt" : "long-output") + "/" + (tight ? "tight" : "loose"),
    });
  }
  return jobs;
}

export interface HeteroRow {
  policy: string; requests: number; failed: number; attainment: number; goodput: number;
  ttftP50: number; ttftP90: number; tpotP50: number; tpotP90: number; predErrP90: number | null; predErrP50: number | null;
}

function meets(r: SloResult, j: Job): boolean {
  return r.status === 200 && r.ttftMs !== null && r.ttftMs <= j.slo.ttft && (r.tpotMs === null || r.tpotMs <= j.slo.tpot);
}

export async function runHetero(policy: PolicyName, rate: number, seconds: number, seed: number, lbConfig?: Record<string, unknown>): Promise<HeteroRow> {
  const topo = await startTopology(HETERO_TOPOLOGY, policy, lbConfig);
  try {
    for (let i = 0; i < topo.pods.length; i += 2) topo.pods[i].control.setSlowFactor(2);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
    const url = `${topo.urls[0]}/v1/chat/completions`;
    const jobs = heteroJobs(rate, seconds, seed);
    // Warm-up (not measured): a few requests so every policy starts with connections and a model.
    const warm = heteroJobs(rate, 3, seed + 1);
    const go = async (list: Job[]) => {
      const t0 = performance.now();
      return Promise.all(list.map(async (j) => {
        const wait = j.at - (performance.now() - t0);
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const body = { messages: [{ role: "user", content: j.prompt }], max_tokens: j.maxTokens, ignore_eos: true, stream: true };
        return sloRequest(url, body, { "x-slo-ttft-ms": String(j.slo.ttft), "x-slo-tpot-ms": String(j.slo.tpot) }, agent, 60_000);
      }));
    };
    await go(warm);
    const results = await go(jobs);
    agent.destroy();
    const ok = results.filter((r) => r.status === 200);
    const met = results.filter((r, i) => meets(r, jobs[i])).length;
    const errs: number[] = [];
    for (const r of ok) {
      const m = r.debug.match(/:ttft=([0-9.]+)/);
      if (m && r.ttftMs) errs.push(Math.abs(Number(m[1]) - r.ttftMs) / r.ttftMs);
    }
    const ttfts = ok.map((r) => r.ttftMs!).filter((v) => v !== null);
    const tpots = ok.map((r) => r.tpotMs).filter((v): v is number => v !== null);
    return {
      policy, requests: results.length, failed: results.length - ok.length, attainment: met / results.length,
      goodput: met / seconds, ttftP50: pct(ttfts, 0.5), ttftP90: pct(ttfts, 0.9), tpotP50: pct(tpots, 0.5), tpotP90: pct(tpots, 0.9),
      predErrP90: errs.length > 0 ? pct(errs, 0.9) : null, predErrP50: errs.length > 0 ? pct(errs, 0.5) : null,
    };
  } finally {
    await topo.close();
  }
}

function arg(args: string[], name: string, def: string): string {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
}

export async function heteroMain(args: string[]): Promise<void> {
  const rate = Number(arg(args, "--rate", "20"));
  const seconds = Number(arg(args, "--seconds", "30"));
  const policies = arg(args, "--policies", "predicted_latency,endpoint_metrics,prefix_cache").split(",") as PolicyName[];
  // lb_config override for predicted_latency, e.g. --slo-config '{"sloPick":"most_headroom"}'.
  const sloConfig = JSON.parse(arg(args, "--slo-config", "{}")) as Record<string, unknown>;
  console.log(`| policy | requests | failed | SLO attainment | goodput (req/s) | TTFT p50 / p90 (ms) | TPOT p50 / p90 (ms) | TTFT prediction error p50 / p90 |`);
  console.log(`|---|---|---|---|---|---|---|---|`);
  for (const p of policies) {
    const r = await runHetero(p, rate, seconds, 11, p === "predicted_latency" ? sloConfig : undefined);
    const f = (v: number) => v.toFixed(1);
    console.log(`| ${r.policy} | ${r.requests} | ${r.failed} | ${(r.attainment * 100).toFixed(1)}% | ${r.goodput.toFixed(2)} | ${f(r.ttftP50)} / ${f(r.ttftP90)} | ${f(r.tpotP50)} / ${f(r.tpotP90)} | ${r.predErrP90 === null ? "-" : (r.predErrP50! * 100).toFixed(0) + "% / " + (r.predErrP90 * 100).toFixed(0) + "%"} |`);
  }
}

if (process.argv[1]?.endsWith("hetero.ts")) heteroMain(process.argv.slice(2)).catch((e) => { console.error(e); process.exit(1); });
