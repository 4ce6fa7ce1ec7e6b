// The demo `npm start` ends with: the same short load (llm-d's "many system prompts" shape, 8
// simulated Qwen3-32B pods, Poisson 16 then 32 req/s for 8 simulated s each) sent twice, each
// time to a fresh stack on free ports — once through the cluster's own round robin (plugin off),
// once through the plugin with the --policy chosen — with a live per-pod view, then a comparison
// and what the chosen policy did. Times are simulated ms (see TIME_NOTE).
// Failure behaviour: a stack that cannot start rejects (npm start prints the message and stops).
import { arrivalTimes, stagesDurationMs, type Stage } from "../../bench/arrivals.js";
import { runLoad, type LoadProgress } from "../../bench/loadgen.js";
import { summarize, type RunSummary } from "../../bench/metrics.js";
import { llmd73 } from "../../bench/scenarios/llmd.js";
import { totalTurns } from "../../bench/workloads/types.js";
import { startLocalStack } from "../local-stack.js";
import { SeededRandom } from "../sim/random.js";
import { parseDecision, renderDemoView, type Decision, type PodView } from "./demo-view.js";
import { POLICY_STORY, startPluginConfig, type StartPolicy } from "./policies.js";

const SEED = 1;
const DEMO_STAGES: Stage[] = [16, 32].map((rate) => ({ rate, durationMs: 8_000 }));
const TIME_SCALE = llmd73.topology.timeScale;
const LAST_DECISIONS = 3;
const LOG_VIEW_EVERY_MS = 4000;
const TTY_REDRAW_MS = 250;

export const TIME_NOTE =
  "Times are simulated ms (the simulator runs 2 simulated ms per wall ms): they are measured on the wall clock, so on a shared or busy CPU replies arrive late and the same run gives different numbers; compare the two rows of one run, and see bench/RESULTS.md for longer, recorded runs.";

export interface DemoRun { policy: StartPolicy | "round_robin"; summary: RunSummary; wallMs: number }

export interface DemoOptions {
  policy: StartPolicy;
  log(line: string): void;
  /** Redraw the view in place (a terminal) instead of printing it every few seconds. */
  redraw?: (lines: string[]) => void;
  /** The load (tests shorten it); default Poisson 16 then 32 req/s, 8 simulated s each. */
  stages?: Stage[];
}

async function runOne(policy: StartPolicy | "round_robin", index: string, o: DemoOptions): Promise<DemoRun> {
  const stages = o.stages ?? DEMO_STAGES;
  const decisions: Decision[] = [];
  let podByAddress = new Map<string, string>();
  const stack = await startLocalStack({
    pods: llmd73.topology.pods,
    workers: 1,
    adminPort: null,
    fleet: { profile: llmd73.topology.profile, profileOverrides: llmd73.topology.profileOverrides, timeScale: TIME_SCALE, seed: SEED },
    // endpoint_metrics reads /metrics from the health checks: check often enough to follow the load.
    healthCheckMs: policy === "endpoint_metrics" ? 100 : 1000,
    plugin: policy === "round_robin" ? null : (port) => startPluginConfig(policy, port, { enableDetailLog: true }),
    gatewayOptions: {
      logEcho: (r) => {
        const d = parseDecision(r.message, podByAddress);
        if (!d) return;
        decisions.push(d);
        if (decisions.length > LAST_DECISIONS) decisions.shift();
      },
    },
  });
  try {
    podByAddress = new Map(stack.fleet.pods.map((p) => [`${p.host}:${p.port}`, p.name]));
    const workload = llmd73.workload(SEED);
    const expected = Math.min(totalTurns(workload), arrivalTimes(stages, "poisson", new SeededRandom(SEED)).length);
    const expectedWallMs = stagesDurationMs(stages) / TIME_SCALE;
    let progress: LoadProgress = { sent: 0, done: 0, failed: 0, inFlight: 0, elapsedWallMs: 0 };
    const started = Date.now();
    const view = () => {
      const pods: PodView[] = stack.fleet.pods.map((p) => {
        const s = p.engine.snapshot();
        const f = s.stats.finished;
        return { name: p.name, running: s.running, waiting: s.waiting, kvUsage: s.kvUsage, prefixQueriedTokens: s.prefixQueriedTokens, prefixHitTokens: s.prefixHitTokens, served: f.stop + f.length + f.abort };
      });
      const p = { ...progress, elapsedWallMs: Date.now() - started, expected, expectedWallMs };
      return renderDemoView(`${index} ${policy}`, p, pods, policy === "round_robin" ? null : decisions);
    };
    let lastLog = 0;
    const tick = setInterval(() => {
      if (o.redraw) o.redraw(view());
      else if (Date.now() - lastLog >= LOG_VIEW_EVERY_MS) {
        lastLog = Date.now();
        for (const line of view()) o.log(line);
      }
    }, o.redraw ? TTY_REDRAW_MS : 500);
    let result;
    try {
      result = await runLoad({
        urls: [stack.gateways[0].url],
        workload,
        load: { mode: "stages", arrivals: "poisson", stages },
        timeScale: TIME_SCALE,
        seed: SEED,
        maxWallMs: 4 * expectedWallMs,
        onProgress: (p) => { progress = p; },
      });
    } finally {
      clearInterval(tick);
    }
    const final = view();
    if (o.redraw) o.redraw(final);
    else for (const line of final) o.log(line);
    return { policy, summary: summarize(result.records, result.durationMs, null, stack.fleet.pods.map((p) => p.name)), wallMs: result.wallMs };
  } finally {
    await stack.close();
  }
}

const ms = (v: number) => v.toFixed(0).padStart(8);

export function comparisonTable(runs: readonly DemoRun[]): string[] {
  const lines = ["policy                ok/sent  TTFT p50  TTFT p90  E2E p90  out tok/s  KV hit  pod max/mean"];
  for (const r of runs) {
    const s = r.summary;
    lines.push(`${r.policy.padEnd(20)} ${`${s.succeeded}/${s.requests}`.padStart(8)}  ${ms(s.ttftMs.p50)}  ${ms(s.ttftMs.p90)} ${ms(s.e2eMs.p90)}  ${s.outputTokensPerSec.toFixed(0).padStart(9)}  ${`${(100 * s.kvHitRate).toFixed(0)}%`.padStart(6)}  ${s.pods.maxOverMean.toFixed(2).padStart(12)}`);
  }
  return lines;
}

function ratio(ours: number, base: number, unit: string, lowerIsBetter: boolean): string {
  const f = (v: number) => `${v.toFixed(0)}${unit}`;
  if (ours <= 0 || base <= 0 || Math.abs(ours - base) / base < 0.05) return `about the same (${f(ours)} vs ${f(base)})`;
  const better = lowerIsBetter ? ours < base : ours > base;
  const times = ours < base ? base / ours : ours / base;
  return `${times.toFixed(1)}x ${ours < base ? "lower" : "higher"} (${f(ours)} vs ${f(base)}, ${better ? "better" : "worse"})`;
}

/** The footer: how the chosen policy compared with round robin in this run, and what it does. */
export function demoFooter(policy: StartPolicy, ours: RunSummary, base: RunSummary): string[] {
  return [
    `${policy} against round robin in this run: TTFT p90 ${ratio(ours.ttftMs.p90, base.ttftMs.p90, " ms", true)}; E2E p90 ${ratio(ours.e2eMs.p90, base.e2eMs.p90, " ms", true)}; KV-cache hits ${(100 * ours.kvHitRate).toFixed(0)}% vs ${(100 * base.kvHitRate).toFixed(0)}%.`,
    POLICY_STORY[policy],
    TIME_NOTE,
  ];
}

export async function runDemo(o: DemoOptions): Promise<DemoRun[]> {
  const stages = o.stages ?? DEMO_STAGES;
  const wall = stagesDurationMs(stages) / TIME_SCALE / 1000;
  o.log(`demo: ${llmd73.topology.pods} simulated pods, many shared system prompts, Poisson ${stages.map((s) => s.rate).join(" then ")} req/s; round robin, then ${o.policy}, each on a fresh stack (~${wall.toFixed(0)} s of arrivals each, then the queues drain)`);
  const runs: DemoRun[] = [];
  for (const [i, policy] of (["round_robin", o.policy] as const).entries()) {
    runs.push(await runOne(policy, `${i + 1}/2`, o));
    o.log(""); // keeps the finished view (a terminal redraws the next one below it)
  }
  for (const line of comparisonTable(runs)) o.log(line);
  o.log("");
  for (const line of demoFooter(o.policy, runs[1].summary, runs[0].summary)) o.log(line);
  return runs;
}
