// SLO routing on a heterogeneous fleet (llm-d's predicted-latency scenarios, scaled): 4 pods, two
// of them 2x slower (sim slowFactor 2), a mixed workload (half short prompt / long completion,
// half long prompt / short completion), each request with its own SLO class (half tight, half
// loose, like llm-d's per-request x-slo-* headers), Poisson arrivals (default 22 req/s: the
// fleet's capacity is ~26 req/s, `--find-capacity`, so ~85% as the issue asks; wall: pass --rate).
// Compared: predicted_latency, endpoint_metrics (utilization scoring), prefix_cache.
// Reports SLO attainment, goodput, TTFT/TPOT p50/p90 and predicted_latency's TTFT prediction error.
// Run: npm run bench -- slo-hetero [--rate R] [--seconds S] [--seeds 11,12] [--policies a,b]
// [--slo-config JSON] [--find-capacity] [--two-chunk-body] [--gateways G] [--workers W] [--replica-share-ms D] [--slots N] [--tight-slo T/P] [--loose-slo T/P] [--tight-on-fast] [--by-class] [--best-effort F] [--redis-traffic] [--ttft-bound] [--wall]. Virtual time by default (simulated ms, seeded);
// --tight-on-fast: a relaxation for the SLO oracles: only the tight half, on the 2 fast pods alone.
// --wall: the real local gateway, wall ms = simulated ms (timeScale 1), seed 11 only.
import http from "node:http";
import { SeededRandom } from "../../host-test/sim/random.js";
import { randomWords } from "../workloads/text.js";
import { startTopology } from "../topology.js";
import type { PolicyName } from "../policies.js";
import { pct, served, sloRequest } from "./client.js";
import { boundFleet, predictedTtft, ttftBoundRows, type BoundRow } from "./ttft-bound.js";
import { clientTimes, runSloJobs, saturatedThroughput, type SloFleet, type SloRunOptions, type RedisTraffic } from "./virtual-run.js";

export const HETERO_TOPOLOGY = {
  pods: 4, profile: "llama-8b-h100", profileOverrides: { maxNumSeqs: 4 }, timeScale: 1, seed: 7, gateways: 1,
};
/** The same fleet for virtual runs: pods 0 and 2 run 2x slower. */
export const HETERO_FLEET: SloFleet = { pods: 4, profile: "llama-8b-h100", profileOverrides: { maxNumSeqs: 4 }, slowPods: [0, 2], slowFactor: 2 };

/** A request of the workload; a best-effort one carries no SLO header (`slo` is its class's, unused). */
interface Job { at: number; prompt: string; maxTokens: number; slo: { ttft: number; tpot: number }; cls: string; bestEffort?: boolean }

/** A request class's SLO (ms). */
export interface SloClass { ttft: number; tpot: number }
/** Tight: what a fast pod meets with room at 4 batch slots; loose: what a slow pod meets. */
export const HETERO_SLOS: { tight: SloClass; loose: SloClass } = { tight: { ttft: 150, tpot: 11 }, loose: { ttft: 600, tpot: 30 } };

/** The mixed workload; with `bestEffort` > 0 that share of the requests carries no SLO (drawn from
 *  a generator of its own, so the requests are the same ones as without, some without an SLO). */
export function heteroJobs(rate: number, seconds: number, seed: number, slos = HETERO_SLOS, bestEffort = 0): Job[] {
  const rng = new SeededRandom(seed);
  const beRng = new SeededRandom(seed ^ 0x5bd1e995);
  const jobs: Job[] = [];
  let t = 0;
  while (true) {
    t += -Math.log(1 - rng.next()) / rate * 1000;
    if (t > seconds * 1000) break;
    const longPrompt = rng.next() < 0.5;
    const tight = rng.next() < 0.5;
    const be = bestEffort > 0 && beRng.next() < bestEffort;
    jobs.push({
      at: t,
      prompt: randomWords(rng, longPrompt ? 1500 : 100),
      maxTokens: longPrompt ? 16 : 96,
      slo: tight ? slos.tight : slos.loose,
      cls: (longPrompt ? "long-prompt" : "long-output") + "/" + (be ? "best-effort" : tight ? "tight" : "loose"),
      ...(be ? { bestEffort: true } : {}),
    });
  }
  return jobs;
}

export interface HeteroRow {
  policy: string; requests: number; failed: number; attainment: number; goodput: number;
  ttftP50: number; ttftP90: number; tpotP50: number; tpotP90: number; predErrP90: number | null; predErrP50: number | null;
}

/** What one client saw, whichever clock ran it. */
export interface Seen { status: number; error: string | null; ttftMs: number | null; tpotMs: number | null; debug: string; pod?: string | null }

function meets(r: Seen, j: Job): boolean {
  return !j.bestEffort && served(r) && r.ttftMs !== null && r.ttftMs <= j.slo.ttft && (r.tpotMs === null || r.tpotMs <= j.slo.tpot);
}

/** |predicted - observed| (ms) of a served request whose debug header carries predicted_latency's
 *  prediction (`:ttft=<ms>`); null for any other. */
function ttftMiss(r: Seen): number | null {
  const predicted = predictedTtft(r.debug);
  return predicted !== null && r.ttftMs ? Math.abs(predicted - r.ttftMs) : null;
}

/** The same relative to the observed TTFT. */
function ttftError(r: Seen): number | null {
  const miss = ttftMiss(r);
  return miss === null ? null : miss / r.ttftMs!;
}

/**
 * The row of one policy. TTFT prediction error: for every served request whose debug header
 * carries predicted_latency's prediction (`:ttft=<ms>`, the chosen host's predicted TTFT at pick
 * time), |predicted - observed| / observed with observed = the client's TTFT (send -> first token).
 */
export function heteroRow(policy: string, jobs: Job[], results: Seen[], seconds: number): HeteroRow {
  const ok = results.filter(served);
  const met = results.filter((r, i) => meets(r, jobs[i])).length;
  // Attainment over the requests with an SLO (best-effort ones have none to meet).
  const withSlo = jobs.filter((j) => !j.bestEffort).length;
  const errs = ok.map(ttftError).filter((e): e is number => e !== null);
  const ttfts = ok.map((r) => r.ttftMs).filter((v): v is number => v !== null);
  const tpots = ok.map((r) => r.tpotMs).filter((v): v is number => v !== null);
  return {
    policy, requests: results.length, failed: results.length - ok.length, attainment: met / withSlo,
    goodput: met / seconds, ttftP50: pct(ttfts, 0.5), ttftP90: pct(ttfts, 0.9), tpotP50: pct(tpots, 0.5), tpotP90: pct(tpots, 0.9),
    predErrP90: errs.length > 0 ? pct(errs, 0.9) : null, predErrP50: errs.length > 0 ? pct(errs, 0.5) : null,
  };
}

/** One line of `--by-class`: a request class on one kind of pod, and why its misses missed. */
export interface ClassRow { cls: string; requests: number; met: number; ttftOnly: number; tpotOnly: number; both: number; failed: number; ttftP90: number; errP90: number | null; missP90Ms: number | null }

/** Per class and pod kind (fast / slow by the run's fleet's slowPods; the virtual fleet names pod i `pod-<i>`), what was met and what missed which SLO. */
function byClass(jobs: Job[], results: Seen[], fleet: SloFleet): ClassRow[] {
  const rows = new Map<string, ClassRow>();
  // Per class: the served requests' TTFTs, and predicted_latency's errors (relative and in ms).
  const samples = new Map<string, { ttft: number[]; err: number[]; miss: number[] }>();
  results.forEach((r, i) => {
    const j = jobs[i];
    const idx = Number(/^pod-(\d+)$/.exec(r.pod ?? "")?.[1] ?? -1);
    const kind = r.pod ? ((fleet.slowPods ?? []).includes(idx) ? "slow" : "fast") : "none";
    const key = `${j.cls} on ${kind}`;
    const row = rows.get(key) ?? { cls: key, requests: 0, met: 0, ttftOnly: 0, tpotOnly: 0, both: 0, failed: 0, ttftP90: 0, errP90: null, missP90Ms: null };
    rows.set(key, row);
    row.requests++;
    if (!served(r) || r.ttftMs === null) { row.failed++; return; }
    const sm = samples.get(key) ?? samples.set(key, { ttft: [], err: [], miss: [] }).get(key)!;
    sm.ttft.push(r.ttftMs);
    const miss = ttftMiss(r);
    if (miss !== null) { sm.miss.push(miss); sm.err.push(miss / r.ttftMs); }
    if (j.bestEffort) { row.met++; return; } // served: a best-effort request has no SLO to miss
    const ttftLate = r.ttftMs > j.slo.ttft, tpotLate = r.tpotMs !== null && r.tpotMs > j.slo.tpot;
    if (ttftLate && tpotLate) row.both++; else if (ttftLate) row.ttftOnly++; else if (tpotLate) row.tpotOnly++; else row.met++;
  });
  for (const [key, v] of samples) {
    const row = rows.get(key)!;
    row.ttftP90 = pct(v.ttft, 0.9);
    if (v.err.length > 0) { row.errP90 = pct(v.err, 0.9); row.missP90Ms = pct(v.miss, 0.9); }
  }
  return [...rows.values()].sort((a, b) => a.cls.localeCompare(b.cls));
}

/** A job's SLOs as the request headers predicted_latency reads. */
export function sloHeaders(j: Job): Array<[string, string]> {
  return j.bestEffort ? [] : [["x-slo-ttft-ms", String(j.slo.ttft)], ["x-slo-tpot-ms", String(j.slo.tpot)]];
}

/** The default rate: ~85% of the fleet's capacity in virtual time (26 req/s, `--find-capacity`). */
export const HETERO_RATE = 22;

/** Warm-up before the measured jobs (not measured): every policy starts with connections and a model. */
const WARM_SECONDS = 5;

/** Only TPOT 11 ms pods serve the tight half: HETERO_FLEET's fast pods (1 and 3) without the slow ones. */
const FAST_PODS: SloFleet = { ...HETERO_FLEET, pods: 2, slowPods: [] };

/** How a virtual run is laid out (SloRunOptions'), and `tightOnFast`: only the tight jobs, on
 *  FAST_PODS (no loose request takes a fast pod); `ttftBound`: the run replayed by ttft-bound.ts. */
export type HeteroLayout = Pick<SloRunOptions, "tokenChunks" | "gateways" | "workers" | "replicaShareMs"> & { tightOnFast?: boolean; slots?: number; slos?: typeof HETERO_SLOS; bestEffort?: number; ttftBound?: boolean };

/** The fleet with `slots` batch slots per engine (HETERO_FLEET's 4 by default). */
function withSlots(fleet: SloFleet, slots: number | undefined): SloFleet {
  return slots === undefined ? fleet : { ...fleet, profileOverrides: { ...fleet.profileOverrides, maxNumSeqs: slots } };
}

/** Virtual time: the warm-up jobs, then the measured ones right after (one continuous arrival stream). */
export async function runHeteroVirtual(policy: PolicyName, rate: number, seconds: number, seed: number, lbConfig?: Record<string, unknown>, layout: HeteroLayout = {}): Promise<HeteroRow & { wallMs: number; byClass: ClassRow[]; avoided: { picks: number; count: number; held: number }; redis: RedisTraffic | null; bound: BoundRow[] | null }> {
  const { tightOnFast = false, slots, slos = HETERO_SLOS, bestEffort = 0, ttftBound = false, ...shape } = layout;
  const keep = (j: Job) => !tightOnFast || j.cls.endsWith("/tight");
  const warm = heteroJobs(rate, WARM_SECONDS, seed + 1, slos, bestEffort).filter(keep);
  const jobs = heteroJobs(rate, seconds, seed, slos, bestEffort).filter(keep).map((j) => ({ ...j, at: j.at + WARM_SECONDS * 1000 }));
  const all = [...warm, ...jobs];
  const fleet = withSlots(tightOnFast ? FAST_PODS : HETERO_FLEET, slots);
  const run = await runSloJobs({
    ...shape, policy, lbConfig, seed, fleet,
    jobs: all.map((j) => ({ at: j.at, prompt: j.prompt, maxTokens: j.maxTokens, headers: sloHeaders(j) })),
  });
  const seen: Seen[] = run.outcomes.slice(warm.length).map((o, i) => {
    const t = clientTimes(o, run.starts[warm.length + i]);
    return { status: o.status, error: o.error, ttftMs: t.ttft, tpotMs: t.tpot, debug: o.debug, pod: o.pod };
  });
  const bound = !ttftBound ? null : ttftBoundRows(run.outcomes.slice(warm.length), run.starts.slice(warm.length), boundFleet(fleet));
  return { ...heteroRow(policy, jobs, seen, seconds), wallMs: run.wallMs, byClass: byClass(jobs, seen, fleet), avoided: { picks: all.length, count: run.interferenceAvoided, held: run.interferenceHeld }, redis: run.redisTraffic, bound };
}

/** Wall clock through the real local gateway (the validation path; a loaded machine inflates it). */
export async function runHetero(policy: PolicyName, rate: number, seconds: number, seed: number, lbConfig?: Record<string, unknown>, workers = 1): Promise<HeteroRow> {
  const topo = await startTopology({ ...HETERO_TOPOLOGY, workers }, policy, lbConfig);
  try {
    for (const i of HETERO_FLEET.slowPods!) topo.pods[i].control.setSlowFactor(2);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
    const url = `${topo.urls[0]}/v1/chat/completions`;
    const jobs = heteroJobs(rate, seconds, seed);
    const warm = heteroJobs(rate, 3, seed + 1);
    const go = async (list: Job[]) => {
      const t0 = performance.now();
      return Promise.all(list.map(async (j) => {
        const wait = j.at - (performance.now() - t0);
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const body = { messages: [{ role: "user", content: j.prompt }], max_tokens: j.maxTokens, ignore_eos: true, stream: true };
        return sloRequest(url, body, Object.fromEntries(sloHeaders(j)), agent, 60_000);
      }));
    };
    await go(warm);
    const results = await go(jobs);
    agent.destroy();
    return heteroRow(policy, jobs, results, seconds);
  } finally {
    await topo.close();
  }
}

/** The fleet's capacity in virtual time: the mixed workload offered at `rate` (far above it). */
export async function heteroCapacity(rate: number, seconds: number, seed: number, slots?: number): Promise<number> {
  const jobs = heteroJobs(rate, WARM_SECONDS + seconds, seed).map((j) => ({ at: j.at, prompt: j.prompt, maxTokens: j.maxTokens, headers: [] }));
  return saturatedThroughput(withSlots(HETERO_FLEET, slots), jobs, seed, WARM_SECONDS * 1000, (WARM_SECONDS + seconds) * 1000);
}

/** `--by-class`: one table per run, printed before the run's row. */
function classTable(rows: ClassRow[]): void {
  console.log(`| class on pods | requests | met (best-effort: served) | missed TTFT only | TPOT only | both | failed | TTFT p90 (ms) | TTFT error p90 | in ms |`);
  console.log(`|---|---|---|---|---|---|---|---|---|---|`);
  for (const c of rows) console.log(`| ${c.cls} | ${c.requests} | ${(100 * c.met / c.requests).toFixed(1)}% | ${c.ttftOnly} | ${c.tpotOnly} | ${c.both} | ${c.failed} | ${c.ttftP90.toFixed(1)} | ${c.errP90 === null ? "-" : (100 * c.errP90).toFixed(0) + "%"} | ${c.missP90Ms === null ? "-" : c.missP90Ms.toFixed(1)} |`);
}

/** `--ttft-bound`: one table per run, printed before the run's row. */
function boundTable(rows: BoundRow[]): void {
  console.log(`| TTFT predictor | requests | error p50 / p90 |`);
  console.log(`|---|---|---|`);
  for (const b of rows) console.log(`| ${b.predictor} | ${b.requests} | ${(100 * b.p50).toFixed(0)}% / ${(100 * b.p90).toFixed(0)}% |`);
}

function arg(args: string[], name: string, def: string): string {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
}

export async function heteroMain(args: string[]): Promise<void> {
  const wall = args.includes("--wall");
  // --two-chunk-body: the plugin sees the first token, then the rest at the end (before 2026-11-25).
  const tokenChunks = !args.includes("--two-chunk-body");
  // --gateways G: requests round robin over G gateways sharing one Redis (virtual time only).
  const gateways = Number(arg(args, "--gateways", "1"));
  // --workers W: each gateway's worker threads, one plugin VM each (as Envoy's), sharing its shared data.
  const workers = Number(arg(args, "--workers", "1"));
  const tightOnFast = args.includes("--tight-on-fast");
  // --slots N (virtual time): every engine runs N batch slots (4 by default), and predicted_latency is told.
  const slotsArg = arg(args, "--slots", "");
  const slots = slotsArg === "" ? undefined : Number(slotsArg);
  // --tight-slo / --loose-slo TTFT/TPOT (ms): the two classes' SLOs (default 150/11 and 600/30,
  // calibrated for 4 slots; larger batches are slower per token).
  const sloArg = (name: string, def: SloClass): SloClass => {
    const m = /^(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)$/.exec(arg(args, name, ""));
    return m ? { ttft: Number(m[1]), tpot: Number(m[2]) } : def;
  };
  const slos = { tight: sloArg("--tight-slo", HETERO_SLOS.tight), loose: sloArg("--loose-slo", HETERO_SLOS.loose) };
  // --replica-share-ms D (a what-if, virtual time): the gateways share their shared data, each
  // seeing the others' writes D ms late, as records shared through Redis would be (RESULTS 12.1).
  const share = arg(args, "--replica-share-ms", "");
  const replicaShareMs = share === "" ? undefined : Number(share);
  // --best-effort F (virtual time): that share of the requests carries no SLO header (attainment
  // counts the others; --by-class shows the best-effort ones' TTFT).
  const bestEffort = Number(arg(args, "--best-effort", "0"));
  // --ttft-bound (virtual time): each run's requests replayed through the engine's steps, to see
  // what TTFT error a predictor with the pick's knowledge could reach (ttft-bound.ts).
  const ttftBound = args.includes("--ttft-bound");
  if (args.includes("--find-capacity")) {
    for (const seed of arg(args, "--seeds", "11,12").split(",").map(Number)) {
      const cap = await heteroCapacity(Number(arg(args, "--rate", "40")), Number(arg(args, "--seconds", "60")), seed, slots);
      console.log(`seed ${seed}: capacity ${cap.toFixed(2)} req/s (85%: ${(0.85 * cap).toFixed(2)})`);
    }
    return;
  }
  const rate = Number(arg(args, "--rate", String(HETERO_RATE)));
  const seconds = Number(arg(args, "--seconds", wall ? "30" : "120"));
  const seeds = arg(args, "--seeds", "11,12").split(",").map(Number);
  const policies = arg(args, "--policies", "predicted_latency,predicted_latency_hold,endpoint_metrics,prefix_cache").split(",") as PolicyName[];
  // lb_config override for predicted_latency (and _hold), e.g. --slo-config '{"sloPick":"most_headroom"}'.
  // The engines run 4 batch slots (HETERO_FLEET): the model is told, as an operator would.
  const sloConfig = { modelBatchSlots: slots ?? 4, ...JSON.parse(arg(args, "--slo-config", "{}")) as Record<string, unknown> };
  console.log(`${wall ? `wall clock, ${workers} worker(s)` : "virtual time"}, ${rate} req/s for ${seconds} s${wall ? "" : ` after ${WARM_SECONDS} s of warm-up, body ${tokenChunks ? "one chunk per token" : "in two chunks"}, ${gateways} gateway(s) x ${workers} worker(s)`}${replicaShareMs === undefined ? "" : `, shared data across gateways ${replicaShareMs} ms late (what-if)`}${tightOnFast ? ", only the tight requests, on the 2 fast pods alone" : ""}${slots === undefined ? "" : `, ${slots} batch slots per engine`}, SLOs tight ${slos.tight.ttft}/${slos.tight.tpot} ms loose ${slos.loose.ttft}/${slos.loose.tpot} ms${bestEffort > 0 ? `, ${bestEffort * 100}% best-effort (no SLO)` : ""}`);
  console.log(`| policy | seed | requests | failed | SLO attainment | goodput (req/s) | TTFT p50 / p90 (ms) | TPOT p50 / p90 (ms) | TTFT prediction error p50 / p90 |`);
  console.log(`|---|---|---|---|---|---|---|---|---|`);
  for (const seed of wall ? [11] : seeds) {
    for (const p of policies) {
      const cfg = p.startsWith("predicted_latency") ? sloConfig : undefined;
      const r: HeteroRow & { byClass?: ClassRow[]; avoided?: { picks: number; count: number; held?: number }; redis?: RedisTraffic | null; bound?: BoundRow[] | null } = wall ? await runHetero(p, rate, seconds, seed, cfg, workers) : await runHeteroVirtual(p, rate, seconds, seed, cfg, { tokenChunks, gateways, workers, tightOnFast, replicaShareMs, slots, slos, bestEffort, ttftBound });
      const f = (v: number) => v.toFixed(1);
      // --by-class (virtual time): per class and pod kind, what was met and which SLO the misses missed.
      if (args.includes("--by-class") && r.byClass) classTable(r.byClass);
      if (args.includes("--by-class") && r.avoided && (r.avoided.count > 0 || (r.avoided.held ?? 0) > 0)) {
        console.log(`(llmlb_slo_interference_avoided_total: ${r.avoided.count}, llmlb_slo_interference_held_total: ${r.avoided.held ?? 0}, of ${r.avoided.picks} requests, warm-up included)`);
      }
      if (r.bound) boundTable(r.bound);
      // --redis-traffic (virtual time): what the plugin sent to Redis and got back, per request.
      if (args.includes("--redis-traffic") && r.redis && r.avoided) {
        const per = (v: number) => (v / r.avoided!.picks).toFixed(1);
        console.log(`(Redis, warm-up included: ${per(r.redis.calls)} calls, ${per(r.redis.sent / 1024)} KiB sent, ${per(r.redis.received / 1024)} KiB received per request)`);
      }
      console.log(`| ${r.policy} | ${seed} | ${r.requests} | ${r.failed} | ${(r.attainment * 100).toFixed(1)}% | ${r.goodput.toFixed(2)} | ${f(r.ttftP50)} / ${f(r.ttftP90)} | ${f(r.tpotP50)} / ${f(r.tpotP90)} | ${r.predErrP90 === null ? "-" : (r.predErrP50! * 100).toFixed(0) + "% / " + (r.predErrP90 * 100).toFixed(0) + "%"} |`);
    }
  }
}

if (process.argv[1]?.endsWith("hetero.ts")) heteroMain(process.argv.slice(2)).catch((e) => { console.error(e); process.exit(1); });
