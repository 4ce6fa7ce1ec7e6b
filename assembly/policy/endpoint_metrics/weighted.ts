// scoring: weighted — Endpoint Picker style scorers, each in [0, 1], summed with weights from
// settings; the highest total wins (ties: the caller picks at random among `best`).
//   queue   (maxQ - q) / (maxQ - minQ) over the candidates, 1 when all equal (q = effective waiting)
//   kv      1 - KV usage (0 usage when unknown)
//   lora    1 adapter running, 0.8 room to load it, 0.6 queued for it, 0 otherwise; 1 for every
//           host when the request names no adapter (no signal)
//   latency (maxL - l) / (maxL - minL) over hosts with an estimate; 1 when all equal or unknown
//           (an unobserved host is tried rather than avoided)
//   prefix  share of the request's prefix the host already served (0 when not read)
// Input: views, adapter, settings. Output: per-host totals and the indices of the best. Pure.
import { MetricsSettings } from "../../config/metrics_settings";
import { HostView } from "../../services/metrics_view/host_view";

const TIE_EPSILON: f64 = 1e-9;

/** Normalised "lower is better" score of values[i] over the finite values: NaN (unknown) 1, +Inf
 *  (an engine may report it; `1e999` parses so) 0, -Inf 1. An infinite value in the range made
 *  every score NaN, no host the best, and the pick indexed an empty list (a trap). */
export function inverseRangeScores(values: f64[]): f64[] {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  const out = new Array<f64>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (isNaN(v) || v == -Infinity) out[i] = 1.0;
    else if (v == Infinity) out[i] = 0.0;
    else out[i] = hi <= lo ? 1.0 : (hi - v) / (hi - lo);
  }
  return out;
}

export function loraScore(v: HostView, adapter: string): f64 {
  if (adapter.length == 0) return 1.0;
  if (v.runsAdapter(adapter)) return 1.0;
  if (v.canLoadAdapter()) return 0.8;
  if (v.waitsForAdapter(adapter)) return 0.6;
  return 0.0;
}

export class WeightedResult {
  totals: f64[] = [];
  best: i32[] = [];
}

export function weightedScores(views: HostView[], adapter: string, s: MetricsSettings): WeightedResult {
  const n = views.length;
  const waiting = new Array<f64>(n);
  const latency = new Array<f64>(n);
  for (let i = 0; i < n; i++) {
    waiting[i] = views[i].effectiveWaiting();
    latency[i] = views[i].latencyMs;
  }
  const queue = inverseRangeScores(waiting);
  const lat = inverseRangeScores(latency);
  const r = new WeightedResult();
  r.totals = new Array<f64>(n);
  let top = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = views[i];
    const total = s.queueWeight * queue[i] + s.kvWeight * (1.0 - v.kvUsage()) +
      s.loraWeight * loraScore(v, adapter) + s.latencyWeight * lat[i] + s.prefixWeight * v.prefixScore;
    r.totals[i] = total;
    if (total > top) top = total;
  }
  for (let i = 0; i < n; i++) if (r.totals[i] >= top - TIE_EPSILON) r.best.push(i);
  return r;
}
