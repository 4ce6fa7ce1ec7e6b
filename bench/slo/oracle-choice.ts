// The SLO oracle's choice among pods from exact forecasts (bench/slo/forecast.ts).
// tpotFit mirrors predicted_latency's default choice (assembly/policy/predicted_latency/choose.ts,
// PICK_TPOT_FIT, without exploration; near ties go to the lowest index, not a random one):
// headroom = min over the given SLOs of (slo - forecast) / slo; among the pods with headroom >= 0,
// those whose TPOT headroom is within TPOT_BAND of the least (the slowest pods fast enough), then
// the lowest TTFT among them (no TTFT SLO: the most headroom); none meets: the most headroom (the
// least late); no SLO: the lowest TTFT + TPOT x max_tokens.
// protectFit: also counts the tight requests that could still be served after this one is placed
// (the probes: tight requests sent next, at several delays); near ties (the choice does not touch
// what the probes need) by tpotFit.
import type { Forecast } from "./forecast.js";

/** As choose.ts TPOT_BAND: a share of the TPOT SLO. */
export const TPOT_BAND = 0.1;
const TIE = 1e-9;

/** A request's SLO in ms; 0: none. */
export interface Slo { ttftMs: number; tpotMs: number }

export interface Choice { index: number; reason: string }

function ratio(forecast: number, slo: number): number {
  return (slo - forecast) / slo;
}

export function headroomOf(f: Forecast, slo: Slo): number {
  let h = Infinity;
  if (slo.ttftMs > 0) h = Math.min(h, ratio(f.ttftMs, slo.ttftMs));
  if (slo.tpotMs > 0 && f.tpotMs !== null) h = Math.min(h, ratio(f.tpotMs, slo.tpotMs));
  return h;
}

/** Among `idx`, the first index of the lowest `score` (the highest when `highest`). */
function extreme(idx: readonly number[], score: (i: number) => number, highest: boolean): number {
  let best = idx[0];
  for (const i of idx) if (highest ? score(i) > score(best) : score(i) < score(best)) best = i;
  return best;
}

function tpotOf(f: Forecast): number {
  return f.tpotMs ?? 0;
}

export function tpotFit(f: readonly Forecast[], slo: Slo, maxTokens: number, among?: readonly number[]): Choice {
  const all = among ?? f.map((_, i) => i);
  if (slo.ttftMs <= 0 && slo.tpotMs <= 0) return { index: extreme(all, (i) => f[i].ttftMs + tpotOf(f[i]) * maxTokens, false), reason: "lowest_latency" };
  const h = (i: number) => headroomOf(f[i], slo);
  const ok = all.filter((i) => h(i) >= 0);
  if (ok.length === 0) return { index: extreme(all, h, true), reason: "slo_unmet" };
  if (slo.tpotMs <= 0) return { index: extreme(ok, h, true), reason: "slo_most_headroom" };
  const tpotRoom = (i: number) => ratio(tpotOf(f[i]), slo.tpotMs);
  const least = Math.min(...ok.map(tpotRoom));
  const band = ok.filter((i) => tpotRoom(i) <= least + TPOT_BAND);
  return { index: slo.ttftMs > 0 ? extreme(band, (i) => f[i].ttftMs, false) : extreme(band, h, true), reason: "slo_tpot_fit" };
}

/**
 * `probesServed(i)`: with this request on pod i, how many probes some pod would still serve
 * within their SLO. Score = (this request meets its SLO on i ? 1 : 0) + probeWeight x probes
 * served: below 1 / probes, only the pods meeting the SLO compete (protect); above, a request may
 * be given up for enough later tight ones (trade). The highest score; near ties by tpotFit.
 */
export function protectFit(f: readonly Forecast[], slo: Slo, maxTokens: number, probesServed: (pod: number) => number, probeWeight: number): Choice {
  const all = f.map((_, i) => i);
  const score = all.map((i) => (headroomOf(f[i], slo) >= 0 ? 1 : 0) + probeWeight * probesServed(i));
  const best = Math.max(...score);
  const top = all.filter((i) => score[i] >= best - TIE);
  const choice = tpotFit(f, slo, maxTokens, top);
  return choice.index === tpotFit(f, slo, maxTokens).index ? choice : { index: choice.index, reason: "slo_protect" };
}

/** The lowest exact TTFT, SLOs ignored: the TTFT p90 that routing at arrival can reach (RESULTS 12.1). */
export function fastest(f: readonly Forecast[]): Choice {
  return { index: extreme(f.map((_, i) => i), (i) => f[i].ttftMs, false), reason: "fastest" };
}
