// Runs one load scenario: for each policy a fresh topology, the load, the summary; then the
// report. A policy whose topology cannot start is reported as skipped, not fatal, so one broken
// part does not hide the others' numbers.
// Failure behaviour: request failures are counted in the summaries; only a loadgen bug throws.
import { openLoopTimes, runLoad, type LoadSpec } from "./loadgen.js";
import { summarize, summarizeByTag } from "./metrics.js";
import { POLICIES, type PolicyName } from "./policies.js";
import { progressPrinter } from "./progress.js";
import type { PolicyRun, ScenarioReport } from "./report.js";
import type { LoadScenario } from "./scenarios/types.js";
import { startTopology } from "./topology.js";
import { totalTurns } from "./workloads/types.js";

export interface RunOverrides {
  seed?: number;
  timeScale?: number;
  policies?: PolicyName[];
  concurrency?: number;
  gateways?: number;
  quiet?: boolean;
  /** Merged into lb_config of every plugin policy of the run (parameter sweeps). */
  lbConfig?: Record<string, unknown>;
}

function effectiveLoad(load: LoadSpec, o: RunOverrides): LoadSpec {
  return load.mode === "concurrency" && o.concurrency !== undefined ? { ...load, concurrency: o.concurrency } : load;
}

export async function runLoadScenario(scenario: LoadScenario, o: RunOverrides = {}): Promise<ScenarioReport> {
  const seed = o.seed ?? 1;
  const topology = { ...scenario.topology, seed, ...(o.timeScale ? { timeScale: o.timeScale } : {}), ...(o.gateways ? { gateways: o.gateways } : {}) };
  const load = effectiveLoad(scenario.load, o);
  const workload = scenario.workload(seed);
  // The same seeded schedule the load generator draws: an open loop sends at most one per arrival.
  const arrivals = load.mode === "concurrency" ? Infinity : openLoopTimes(load, seed).length;
  const expected = Math.min(scenario.maxRequests ?? Infinity, totalTurns(workload), arrivals);
  const report: ScenarioReport = {
    scenario: scenario.name,
    description: scenario.description,
    startedAt: new Date().toISOString(),
    parameters: { ...scenario.parameters, mode: "wall", seed, topology, load, sessions: workload.sessions.length, turns: totalTurns(workload) },
    slo: scenario.slo ?? null,
    runs: [],
    notes: [...(scenario.notes ?? [])],
  };
  for (const policy of o.policies ?? scenario.policies) {
    const run: PolicyRun = { policy, description: POLICIES[policy].description + (o.lbConfig ? ` + lb_config ${JSON.stringify(o.lbConfig)}` : "") };
    report.runs.push(run);
    let topo;
    try {
      topo = await startTopology(topology, policy, o.lbConfig);
    } catch (e) {
      run.skipped = (e as Error).message.split("\n")[0];
      if (!o.quiet) process.stderr.write(`${scenario.name}/${policy}: skipped: ${run.skipped}\n`);
      continue;
    }
    const progress = o.quiet ? null : progressPrinter(`${scenario.name}/${policy}`, expected);
    try {
      const result = await runLoad({
        urls: topo.urls,
        workload,
        load,
        timeScale: topology.timeScale,
        seed,
        spread: scenario.spread,
        maxRequests: scenario.maxRequests,
        maxWallMs: scenario.maxWallMs,
        onProgress: progress ? (p) => progress.update(p) : undefined,
      });
      const podNames = topo.pods.map((p) => p.name);
      run.summary = summarize(result.records, result.durationMs, scenario.slo ?? null, podNames);
      const byTag = summarizeByTag(result.records, result.durationMs, scenario.slo ?? null);
      if (Object.keys(byTag).length > 0) run.byTag = byTag;
      const { records: _records, ...loadgen } = result;
      run.loadgen = loadgen;
    } finally {
      progress?.done();
      await topo.close();
    }
  }
  return report;
}
