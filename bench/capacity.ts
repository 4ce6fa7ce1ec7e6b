// Capacity at an SLO (goodput): the highest offered rate whose run still meets the SLO, found by a
// load sweep (ascending rates until the first miss) refined by bisection between the last rate
// that met it and the first that did not. Each measurement is one fresh run at one constant
// Poisson rate. The SLO: TTFT p90 (and optionally TPOT p90) within bounds and at least
// `minSuccess` of the requests succeeding. Pure logic: the caller supplies `measure`.
// Failure behaviour: throws on an empty or unsorted rate list (scenario definition error).
import type { RunSummary } from "./metrics.js";

export interface CapacitySlo {
  ttftP90Ms: number;
  tpotP90Ms?: number;
  /** Share of requests that must succeed (default 0.99). */
  minSuccess?: number;
}

export interface RatePoint { rate: number; summary: RunSummary; meets: boolean }

export interface CapacityResult {
  /** Highest rate measured that met the SLO (null: even the lowest missed). */
  rate: number | null;
  /** Output tokens per second of that run (the goodput figure peers publish). */
  outputTokensPerSec: number | null;
  /** Lowest rate measured that missed the SLO (null: every rate met it). */
  firstMiss: number | null;
  points: RatePoint[];
}

export function meetsSlo(s: RunSummary, slo: CapacitySlo): boolean {
  if (s.requests === 0) return false;
  if (s.succeeded / s.requests < (slo.minSuccess ?? 0.99)) return false;
  if (s.ttftMs.p90 > slo.ttftP90Ms) return false;
  return slo.tpotP90Ms === undefined || s.tpotMs.p90 <= slo.tpotP90Ms;
}

export async function searchCapacity(
  rates: readonly number[], slo: CapacitySlo, measure: (rate: number) => Promise<RunSummary>, bisectSteps = 2,
): Promise<CapacityResult> {
  if (rates.length === 0) throw new Error("searchCapacity: no rates");
  for (let i = 1; i < rates.length; i++) if (!(rates[i] > rates[i - 1])) throw new Error("searchCapacity: rates must ascend");
  const points: RatePoint[] = [];
  const probe = async (rate: number) => {
    const summary = await measure(rate);
    const p = { rate, summary, meets: meetsSlo(summary, slo) };
    points.push(p);
    return p;
  };
  let pass: RatePoint | null = null;
  let miss: RatePoint | null = null;
  for (const rate of rates) {
    const p = await probe(rate);
    if (!p.meets) { miss = p; break; }
    pass = p;
  }
  for (let i = 0; i < bisectSteps && miss; i++) {
    const lo = pass?.rate ?? 0;
    const mid = (lo + miss.rate) / 2;
    if (mid <= 0 || miss.rate - lo < 1e-6) break;
    const p = await probe(mid);
    if (p.meets) pass = p; else miss = p;
  }
  points.sort((a, b) => a.rate - b.rate);
  return { rate: pass?.rate ?? null, outputTokensPerSec: pass?.summary.outputTokensPerSec ?? null, firstMiss: miss?.rate ?? null, points };
}
