// `npm run bench -- <scenario> --replicas 1,2,4,8,10`: the same workload, seed and fleet behind N
// gateway replicas (one shared Redis), per policy; reports TTFT p90 and KV hit rate next to N = 1
// and whether they stay within 5%. Policies without a shared view (Envoy's per-gateway
// least_request) are the herding baseline.
// Failure behaviour: throws on an empty replica list; skipped policies show as "-".
import type { RunSummary } from "../metrics.js";
import type { PolicyName } from "../policies.js";
import type { LoadScenario } from "../scenarios/types.js";
import { runVirtualScenario, type VirtualOverrides } from "./run-virtual.js";

export interface ReplicaPoint { replicas: number; policy: PolicyName; summary: RunSummary | null; wallMs: number }

export async function runReplicas(scenario: LoadScenario, counts: number[], o: VirtualOverrides, log: (l: string) => void = () => {}): Promise<ReplicaPoint[]> {
  if (counts.length === 0) throw new Error("--replicas needs at least one count");
  const points: ReplicaPoint[] = [];
  for (const replicas of counts) {
    for (const policy of o.policies ?? scenario.policies) {
      const t = Date.now();
      const r = await runVirtualScenario(scenario, { ...o, quiet: true, gateways: replicas, policies: [policy] });
      const summary = r.runs[0].summary ?? null;
      points.push({ replicas, policy, summary, wallMs: Date.now() - t });
      if (summary) log(`${scenario.name}/${policy} x${replicas}: TTFT p90 ${summary.ttftMs.p90.toFixed(1)} ms, p99 ${summary.ttftMs.p99.toFixed(1)} ms, KV hit ${(100 * summary.kvHitRate).toFixed(1)}%`);
    }
  }
  return points;
}

const pct = (a: number, b: number) => (b === 0 ? (a === 0 ? "0.0%" : "-") : `${a >= b ? "+" : ""}${(100 * (a - b) / b).toFixed(1)}%`);

export function replicasTable(points: ReplicaPoint[]): string {
  const lines = [
    "| policy | gateways | TTFT p90 | vs 1 gateway | TTFT p99 | KV hit | vs 1 gateway | pod max/mean | within 5% |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---|",
  ];
  for (const p of points) {
    const base = points.find((x) => x.policy === p.policy && x.replicas === Math.min(...points.filter((y) => y.policy === p.policy).map((y) => y.replicas)))?.summary;
    const s = p.summary;
    if (!s || !base) { lines.push(`| ${p.policy} | ${p.replicas} | - | - | - | - | - | - | - |`); continue; }
    const ttftOk = Math.abs(s.ttftMs.p90 - base.ttftMs.p90) <= 0.05 * base.ttftMs.p90;
    const hitOk = Math.abs(s.kvHitRate - base.kvHitRate) <= 0.05 * base.kvHitRate;
    lines.push(`| ${p.policy} | ${p.replicas} | ${s.ttftMs.p90.toFixed(1)} | ${pct(s.ttftMs.p90, base.ttftMs.p90)} | ${s.ttftMs.p99.toFixed(1)} | ${(100 * s.kvHitRate).toFixed(1)}% | ${pct(s.kvHitRate, base.kvHitRate)} | ${s.pods.maxOverMean.toFixed(2)} | ${ttftOk && hitOk ? "yes" : `no${ttftOk ? "" : " (TTFT)"}${hitOk ? "" : " (hit)"}`} |`);
  }
  return lines.join("\n");
}
