// `npm run bench -- <scenario> --capacity`: capacity at SLO per policy, in virtual time. For each
// policy, bench/capacity.ts sweeps the scenario's rates (one fresh fleet, Redis and gateways per
// rate, constant-rate Poisson arrivals for `durationMs`), then bisects; the table gives the
// highest rate meeting the SLO, its output tok/s (goodput), and ratios to random and omniscient.
// Failure behaviour: throws when the scenario has no capacity spec; a skipped policy is reported.
import { searchCapacity, type CapacityResult } from "../capacity.js";
import type { PolicyName } from "../policies.js";
import type { LoadScenario } from "../scenarios/types.js";
import { runVirtualScenario, type VirtualOverrides } from "./run-virtual.js";

export interface CapacityReport {
  scenario: string;
  seed: number;
  slo: NonNullable<LoadScenario["capacity"]>["slo"];
  durationMs: number;
  policies: Array<{ policy: PolicyName; result: CapacityResult | null; skipped?: string; wallMs: number }>;
}

export async function runCapacity(scenario: LoadScenario, o: VirtualOverrides & { rates?: number[] } = {}, log: (line: string) => void = () => {}): Promise<CapacityReport> {
  const spec = scenario.capacity;
  if (!spec) throw new Error(`scenario ${scenario.name} has no capacity spec`);
  const seed = o.seed ?? 1;
  const report: CapacityReport = { scenario: scenario.name, seed, slo: spec.slo, durationMs: spec.durationMs, policies: [] };
  for (const policy of o.policies ?? scenario.policies) {
    const started = Date.now();
    let skipped: string | undefined;
    const result = await searchCapacity(o.rates ?? spec.rates, spec.slo, async (rate) => {
      const r = await runVirtualScenario(scenario, {
        ...o, seed, quiet: true, policies: [policy], drainMs: spec.drainMs,
        load: { mode: "stages", arrivals: "poisson", stages: [{ rate, durationMs: spec.durationMs }] },
      });
      const run = r.runs[0];
      if (!run.summary) { skipped = run.skipped ?? "no summary"; throw new Error(skipped); }
      const s = run.summary;
      log(`${scenario.name}/${policy} @ ${rate.toFixed(2)} req/s: TTFT p90 ${s.ttftMs.p90.toFixed(0)} ms, TPOT p90 ${s.tpotMs.p90.toFixed(1)} ms, ok ${s.succeeded}/${s.requests}, out ${s.outputTokensPerSec.toFixed(0)} tok/s, KV hit ${(100 * s.kvHitRate).toFixed(1)}%`);
      return s;
    }, spec.bisectSteps ?? 2).catch((e: Error) => { skipped ??= e.message; return null; });
    report.policies.push({ policy, result, ...(skipped && !result ? { skipped } : {}), wallMs: Date.now() - started });
  }
  return report;
}

const f = (v: number | null, d = 1) => (v === null ? "-" : v.toFixed(d));

export function capacityTable(r: CapacityReport): string {
  const cap = (p: PolicyName) => r.policies.find((x) => x.policy === p)?.result?.rate ?? null;
  const random = cap("random");
  const omni = cap("omniscient");
  const lines = [
    `SLO: TTFT p90 <= ${r.slo.ttftP90Ms} ms${r.slo.tpotP90Ms ? `, TPOT p90 <= ${r.slo.tpotP90Ms} ms` : ""}, >= ${100 * (r.slo.minSuccess ?? 0.99)}% ok; ${r.durationMs / 1000} s of Poisson arrivals per rate; seed ${r.seed}.`,
    "",
    "| policy | capacity req/s | output tok/s at capacity | TTFT p90 there | KV hit there | first miss req/s | x random | / omniscient | wall s |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const p of r.policies) {
    const res = p.result;
    const at = res?.points.find((x) => x.rate === res.rate)?.summary;
    lines.push(`| ${p.policy} | ${f(res?.rate ?? null, 2)} | ${f(res?.outputTokensPerSec ?? null, 0)} | ${at ? f(at.ttftMs.p90, 0) : "-"} | ${at ? `${(100 * at.kvHitRate).toFixed(1)}%` : "-"} | ${f(res?.firstMiss ?? null, 2)} | ${res?.rate && random ? f(res.rate / random, 2) : "-"} | ${res?.rate && omni ? f(res.rate / omni, 2) : "-"} | ${(p.wallMs / 1000).toFixed(0)} |`);
  }
  return lines.join("\n");
}
