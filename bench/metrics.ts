// Summary statistics of one run, with the conventions of vllm bench serve / inference-perf /
// GenAI-Perf: TTFT, TPOT = (E2E - TTFT) / (output - 1), ITL (gaps between chunks), E2E, each as
// mean / p50 / p90 / p99 over successful requests; request and output-token throughput per
// simulated second; goodput = successful requests per second meeting every given SLO; SLO
// attainment = requests meeting every SLO / all requests (failed ones miss); KV hit rate
// = sum cached_tokens / sum prompt_tokens; per-pod request counts and their spread
// (max / mean; coefficient of variation); failures by reason. Pure; never throws (empty input
// gives zeros and nulls).
import type { RequestRecord } from "./loadgen.js";

export interface Distribution { mean: number; p50: number; p90: number; p99: number; count: number }

export interface Slo { ttftMs?: number; tpotMs?: number; e2eMs?: number }

export interface PodSpread {
  requests: Record<string, number>;
  /** Busiest pod's count / mean count (1 = perfectly even). */
  maxOverMean: number;
  /** Standard deviation / mean of the per-pod counts. */
  cv: number;
}

export interface RunSummary {
  requests: number;
  succeeded: number;
  failed: number;
  failures: Record<string, number>;
  ttftMs: Distribution;
  tpotMs: Distribution;
  itlMs: Distribution;
  e2eMs: Distribution;
  requestsPerSec: number;
  outputTokensPerSec: number;
  goodputPerSec: number | null;
  /** Share of ALL requests meeting every SLO (null without SLOs): a failed, shed (429) or timed-out
   *  request misses its SLO, so shedding cannot raise it (as slo-hetero's attainment). */
  sloAttainment: number | null;
  kvHitRate: number;
  pods: PodSpread;
}

/** Percentile by linear interpolation between closest ranks (numpy's default). `sorted` ascending. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

/** Nearest-rank percentile, `p` in [0, 1]: the smallest value with at least a share p of the values
 *  at or below it (index ceil(p x n) - 1); NaN for no values. The SLO tables' and the wall
 *  micro-benchmarks' convention (a p99 of 100 values is the 99th, not the largest). */
export function nearestRank(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
}

export function distribution(values: readonly number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    mean: sorted.length > 0 ? sum / sorted.length : 0,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    count: sorted.length,
  };
}

/** TPOT of one request; null for a single-token output (no inter-token time). */
export function tpotOf(r: RequestRecord): number | null {
  if (r.ttftMs === null || r.outputTokens < 2) return null;
  return (r.e2eMs - r.ttftMs) / (r.outputTokens - 1);
}

export function meetsSlo(r: RequestRecord, slo: Slo): boolean {
  if (!r.ok) return false;
  if (slo.ttftMs !== undefined && (r.ttftMs === null || r.ttftMs > slo.ttftMs)) return false;
  const tpot = tpotOf(r);
  if (slo.tpotMs !== undefined && tpot !== null && tpot > slo.tpotMs) return false;
  if (slo.e2eMs !== undefined && r.e2eMs > slo.e2eMs) return false;
  return true;
}

export function podSpread(records: readonly RequestRecord[], podNames: readonly string[] = []): PodSpread {
  const requests: Record<string, number> = {};
  for (const name of podNames) requests[name] = 0; // an idle pod counts, with 0
  for (const r of records) if (r.ok && r.pod !== null) requests[r.pod] = (requests[r.pod] ?? 0) + 1;
  const counts = Object.values(requests);
  if (counts.length === 0) return { requests, maxOverMean: 0, cv: 0 };
  const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
  if (mean === 0) return { requests, maxOverMean: 0, cv: 0 };
  const variance = counts.reduce((a, c) => a + (c - mean) ** 2, 0) / counts.length;
  return { requests, maxOverMean: Math.max(...counts) / mean, cv: Math.sqrt(variance) / mean };
}

/** Failure reasons with the variable part dropped ("timeout after 5000 ms" -> "timeout"). */
function failureReason(error: string): string {
  if (error.startsWith("status ")) return error;
  return error.split(/[: ]/)[0];
}

export function summarize(records: readonly RequestRecord[], durationMs: number, slo: Slo | null = null, podNames: readonly string[] = []): RunSummary {
  const ok = records.filter((r) => r.ok);
  const failures: Record<string, number> = {};
  for (const r of records) if (!r.ok) failures[failureReason(r.error ?? "unknown")] = (failures[failureReason(r.error ?? "unknown")] ?? 0) + 1;
  const seconds = durationMs / 1000;
  const perSec = (n: number) => (seconds > 0 ? n / seconds : 0);
  let prompt = 0;
  let cached = 0;
  let output = 0;
  for (const r of ok) {
    prompt += r.promptTokens;
    cached += r.cachedTokens;
    output += r.outputTokens;
  }
  const good = slo ? ok.filter((r) => meetsSlo(r, slo)).length : null;
  return {
    requests: records.length,
    succeeded: ok.length,
    failed: records.length - ok.length,
    failures,
    ttftMs: distribution(ok.flatMap((r) => (r.ttftMs === null ? [] : [r.ttftMs]))),
    tpotMs: distribution(ok.flatMap((r) => { const t = tpotOf(r); return t === null ? [] : [t]; })),
    itlMs: distribution(ok.flatMap((r) => r.itlMs)),
    e2eMs: distribution(ok.map((r) => r.e2eMs)),
    requestsPerSec: perSec(ok.length),
    outputTokensPerSec: perSec(output),
    goodputPerSec: good === null ? null : perSec(good),
    sloAttainment: good === null ? null : records.length > 0 ? good / records.length : 0,
    kvHitRate: prompt > 0 ? cached / prompt : 0,
    pods: podSpread(records, podNames),
  };
}

/** Per-tag summaries (e.g. Galileo's input classes); records without a tag are left out. */
export function summarizeByTag(records: readonly RequestRecord[], durationMs: number, slo: Slo | null = null): Record<string, RunSummary> {
  const tags = [...new Set(records.flatMap((r) => (r.tag === undefined ? [] : [r.tag])))];
  return Object.fromEntries(tags.map((t) => [t, summarize(records.filter((r) => r.tag === t), durationMs, slo)]));
}
