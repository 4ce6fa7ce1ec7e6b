// Scenario results on disk: bench/out/<scenario>-<stamp>/ gets report.json (everything, records
// summarised), report.md (one table row per policy, every time in SIMULATED ms / per simulated
// second) and SVG charts (TTFT p90, output throughput, KV hit rate, per-pod load spread), plus
// report.html (bench/html-report.ts: all of it on one self-contained page). bench/out
// is git-ignored. Failure behaviour: filesystem errors propagate (the run itself already finished).
import fs from "node:fs";
import path from "node:path";
import type { LoadgenResult } from "./loadgen.js";
import type { Distribution, RunSummary, Slo } from "./metrics.js";
import type { PolicyName } from "./policies.js";
import { reportHtmlFromDir } from "./html-report.js";
import { barChart, groupedBarChart } from "./svg-chart.js";

export interface PolicyRun {
  policy: PolicyName;
  description: string;
  /** Set when the policy could not run (e.g. the gateway failed to start); no summary then. */
  skipped?: string;
  summary?: RunSummary;
  /** Per request class (workloads with tags). */
  byTag?: Record<string, RunSummary>;
  /** Virtual runs add `events` (clock events run) and `redisCalls`. */
  loadgen?: Omit<LoadgenResult, "records"> & { events?: number; redisCalls?: number };
}

export interface ScenarioReport {
  scenario: string;
  description: string;
  startedAt: string;
  /** Workload, topology and load parameters, as run. */
  parameters: Record<string, unknown>;
  slo: Slo | null;
  runs: PolicyRun[];
  notes: string[];
}

export interface WrittenReport { dir: string; files: string[] }

const ms = (v: number) => v.toFixed(v >= 100 ? 0 : 1);
/** A percentile of a distribution; "-" when it has no sample (metrics.ts gives 0 then, which is no latency). */
const msOf = (d: Distribution, p: "p50" | "p90" | "p99") => (d.count === 0 ? "-" : ms(d[p]));
const pct = (v: number) => `${(100 * v).toFixed(1)}%`;

export function markdownTable(report: ScenarioReport): string {
  const lines = [
    `## ${report.scenario}`,
    "",
    report.description,
    "",
    "Times in simulated ms; rates per simulated second.",
    "",
    "| policy | ok / sent | TTFT p50 | TTFT p90 | TTFT p99 | TPOT p90 | E2E p90 | req/s | out tok/s | goodput/s | KV hit | pod max/mean | failures |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
  ];
  for (const run of report.runs) {
    const s = run.summary;
    if (!s) {
      lines.push(`| ${run.policy} | skipped: ${run.skipped ?? "no result"} |||||||||||`);
      continue;
    }
    const failures = Object.entries(s.failures).map(([k, n]) => `${k} x${n}`).join(", ") || "-";
    lines.push(`| ${run.policy} | ${s.succeeded} / ${s.requests} | ${msOf(s.ttftMs, "p50")} | ${msOf(s.ttftMs, "p90")} | ${msOf(s.ttftMs, "p99")} | ${msOf(s.tpotMs, "p90")} | ${msOf(s.e2eMs, "p90")} | ${s.requestsPerSec.toFixed(2)} | ${s.outputTokensPerSec.toFixed(0)} | ${s.goodputPerSec === null ? "-" : s.goodputPerSec.toFixed(2)} | ${pct(s.kvHitRate)} | ${s.pods.maxOverMean.toFixed(2)} | ${failures} |`);
  }
  const tagged = report.runs.filter((r) => r.byTag && Object.keys(r.byTag).length > 0);
  if (tagged.length > 0) {
    lines.push("", "| policy | class | TTFT p99 | E2E p99 | requests |", "|---|---|---:|---:|---:|");
    for (const run of tagged) {
      for (const [tag, s] of Object.entries(run.byTag!)) lines.push(`| ${run.policy} | ${tag} | ${msOf(s.ttftMs, "p99")} | ${msOf(s.e2eMs, "p99")} | ${s.succeeded} |`);
    }
  }
  if (report.notes.length > 0) lines.push("", ...report.notes.map((n) => `- ${n}`));
  return lines.join("\n") + "\n";
}

export function charts(report: ScenarioReport): Record<string, string> {
  const done = report.runs.filter((r) => r.summary);
  const bars = (f: (s: RunSummary) => number) => done.map((r) => ({ label: r.policy, value: f(r.summary!) }));
  return {
    "ttft-p90.svg": barChart(`${report.scenario}: TTFT p90`, "simulated ms", bars((s) => s.ttftMs.p90)),
    "throughput.svg": barChart(`${report.scenario}: output throughput`, "tokens / simulated s", bars((s) => s.outputTokensPerSec)),
    "kv-hit.svg": barChart(`${report.scenario}: KV prefix hit rate`, "%", bars((s) => 100 * s.kvHitRate)),
    "pod-spread.svg": groupedBarChart(`${report.scenario}: requests per pod`, "requests", done.map((r) => ({
      label: r.policy,
      bars: Object.entries(r.summary!.pods.requests).sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true })).map(([pod, n]) => ({ label: pod, value: n })),
    }))),
  };
}

export function writeReport(report: ScenarioReport, outRoot: string): WrittenReport {
  const stamp = report.startedAt.replace(/[:.]/g, "-");
  const dir = path.join(outRoot, `${report.scenario}-${stamp}`);
  fs.mkdirSync(dir, { recursive: true });
  const files: Record<string, string> = {
    "report.json": JSON.stringify(report, null, 2) + "\n",
    "report.md": markdownTable(report),
    ...charts(report),
  };
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  fs.writeFileSync(path.join(dir, "report.html"), reportHtmlFromDir(dir)); // the same tables and charts, one page
  return { dir, files: [...Object.keys(files), "report.html"].map((f) => path.join(dir, f)) };
}

/** Problems that make a checked run fail (CI smoke). */
export function checkProblems(report: ScenarioReport): string[] {
  const problems: string[] = [];
  for (const run of report.runs) {
    if (run.skipped) problems.push(`${run.policy}: skipped (${run.skipped})`);
    else if (!run.summary || run.summary.succeeded === 0) problems.push(`${run.policy}: no successful request`);
    else if (run.summary.failed > 0) problems.push(`${run.policy}: ${run.summary.failed} failed: ${JSON.stringify(run.summary.failures)}`);
  }
  return problems;
}
