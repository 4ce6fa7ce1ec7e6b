// The latency model of predicted_latency (pure math, no host calls): per host, exponentially
// forgotten least squares over a few features, kept as sufficient statistics so that every
// gateway can add its observations to the same sums in Redis (lua/model.lua) and every gateway
// solves the same model from them.
// Stats layout for k features (the same in lua/model.lua): the upper triangle of sum(x x^T)
// (row-major), sum(x y), sum(y y), weight n; k(k+1)/2 + k + 2 numbers.
// A host's coefficients are a ridge solution pulled toward a prior (the pooled fleet model), so a
// host with few observations predicts like the fleet and moves away as its own evidence grows.

export function statsLength(k: i32): i32 {
  return k * (k + 1) / 2 + k + 2;
}

/** Zeroed stats for k features. */
export function emptyStats(k: i32): f64[] {
  return new Array<f64>(statsLength(k)).fill(0.0);
}

/** Parses "a b c ..." (model.lua's field) into stats of k features; null when malformed. */
export function parseStats(k: i32, text: string): f64[] | null {
  const out = new Array<f64>(0);
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const space = i == text.length || text.charCodeAt(i) == 32;
    if (space) {
      if (start >= 0) {
        const v = F64.parseFloat(text.substring(start, i));
        if (!isFinite(v)) return null;
        out.push(v);
        start = -1;
      }
    } else if (start < 0) start = i;
  }
  return out.length == statsLength(k) ? out : null;
}

/** What model.lua does for one observation, done locally (the VM sees its own at once), with its
 *  guards: an observation whose own sums are not finite (1e200 is finite, its square is not) is
 *  refused (false, `s` unchanged: not to be sent either), and sums this one would overflow restart
 *  from it alone. One inf in a host's sums made the fleet prior, so every host's fit, null. */
export function foldObservation(s: f64[], k: i32, x: f64[], y: f64, decay: f64): bool {
  const alone = emptyStats(k);
  addProducts(alone, k, x, y);
  if (!allFinite(alone)) return false;
  for (let j = 0; j < s.length; j++) s[j] *= decay;
  addProducts(s, k, x, y);
  if (!allFinite(s)) for (let j = 0; j < s.length; j++) s[j] = alone[j];
  return true;
}

function addProducts(s: f64[], k: i32, x: f64[], y: f64): void {
  let at = 0;
  for (let r = 0; r < k; r++) {
    for (let c = r; c < k; c++) { s[at] += x[r] * x[c]; at++; }
  }
  for (let r = 0; r < k; r++) { s[at] += x[r] * y; at++; }
  s[at] += y * y;
  s[at + 1] += 1;
}

function allFinite(s: f64[]): bool {
  for (let j = 0; j < s.length; j++) if (!isFinite(s[j])) return false;
  return true;
}

/** Adds b into a (pooling hosts' stats for the fleet prior). */
export function addStats(a: f64[], b: f64[]): void {
  for (let j = 0; j < a.length && j < b.length; j++) a[j] += b[j];
}

/** The weight (forgotten observation count) of the stats. */
export function weightOf(s: f64[]): f64 {
  return s.length > 0 ? s[s.length - 1] : 0;
}

/**
 * Coefficients theta minimising sum (y - theta.x)^2 + ridge |theta - prior|^2, from the stats;
 * null when the stats hold no observation or the system is singular (ridge 0, too few points).
 * Gaussian elimination with partial pivoting on k x k (k <= 4): well under a microsecond.
 */
export function solve(s: f64[], k: i32, prior: f64[] | null, ridge: f64): f64[] | null {
  return solveFixed(s, k, prior, ridge, null);
}

/**
 * As solve, with no slope (every coefficient but the intercept) below 0: the most negative one is
 * fixed at 0 and the rest solved again, until none is (at most k - 1 solves; the active set of
 * NNLS, enough for k <= 4). Without batch slots the requests in flight are the model's only load
 * signal, and a slope below 0 (collinear features: cached prompts go where the load is) made a
 * loaded pod look faster the more it was sent (bench/RESULTS.md 12.1j).
 */
export function solveNonNegative(s: f64[], k: i32, prior: f64[] | null, ridge: f64): f64[] | null {
  const fixed = new Array<bool>(k).fill(false);
  for (let round = 0; round < k; round++) {
    const theta = solveFixed(s, k, prior, ridge, fixed);
    if (theta === null) return null;
    let worst = -1;
    for (let j = 1; j < k; j++) if (!fixed[j] && theta[j] < 0 && (worst < 0 || theta[j] < theta[worst])) worst = j;
    if (worst < 0) return theta;
    fixed[worst] = true;
  }
  return null;
}

/** solveFixed's k x (k + 1) system for k <= 4, reused: a pick refits every candidate after each
 *  observation (two solves per host), and every entry is written before it is read. */
const SCRATCH_K: i32 = 4;
const scratchSystem = new Array<f64>(SCRATCH_K * (SCRATCH_K + 1));

/** solve with the coefficients `fixed` (when given) held at 0. */
function solveFixed(s: f64[], k: i32, prior: f64[] | null, ridge: f64, fixed: bool[] | null): f64[] | null {
  if (weightOf(s) <= 0 && prior === null) return null;
  const w = k + 1;
  const m = k <= SCRATCH_K ? scratchSystem : new Array<f64>(k * w);
  let at = 0;
  for (let r = 0; r < k; r++) {
    for (let c = r; c < k; c++) {
      const v = s[at]; at++;
      m[r * w + c] = v;
      m[c * w + r] = v;
    }
  }
  for (let r = 0; r < k; r++) {
    m[r * w + r] += ridge;
    m[r * w + k] = s[at] + (prior !== null ? ridge * prior[r] : 0); at++;
  }
  if (fixed !== null) {
    for (let r = 0; r < k; r++) {
      if (!fixed[r]) continue;
      for (let c = 0; c <= k; c++) m[r * w + c] = 0;
      m[r * w + r] = 1;
    }
  }
  for (let col = 0; col < k; col++) {
    let pivot = col;
    for (let r = col + 1; r < k; r++) if (abs(m[r * w + col]) > abs(m[pivot * w + col])) pivot = r;
    if (abs(m[pivot * w + col]) < 1e-12) return null;
    if (pivot != col) {
      for (let c = 0; c <= k; c++) { const t = m[col * w + c]; m[col * w + c] = m[pivot * w + c]; m[pivot * w + c] = t; }
    }
    for (let r = col + 1; r < k; r++) {
      const f = m[r * w + col] / m[col * w + col];
      if (f == 0) continue;
      for (let c = col; c <= k; c++) m[r * w + c] -= f * m[col * w + c];
    }
  }
  const theta = new Array<f64>(k);
  for (let r = k - 1; r >= 0; r--) {
    let v = m[r * w + k];
    for (let c = r + 1; c < k; c++) v -= m[r * w + c] * theta[c];
    theta[r] = v / m[r * w + r];
  }
  for (let r = 0; r < k; r++) if (!isFinite(theta[r])) return null;
  // A fixed coefficient is 0, not the -3e-16 the elimination can leave (bench/RESULTS.md 12.1k).
  if (fixed !== null) for (let r = 0; r < k; r++) if (fixed[r]) theta[r] = 0;
  return theta;
}

/** Highest multiple of the prediction an observation may count for (outlier clip). */
export const CLIP_FACTOR: f64 = 3.0;

/**
 * An observation clipped to CLIP_FACTOR x the current prediction (when there is one): a single
 * outlier (a cold connection, a stalled step) would otherwise make a host look slow, and a host
 * that looks slow is picked less, so its model would be slow to recover. A real slowdown still
 * gets through: each observation moves the model up to 3x, and the next ones follow.
 */
export function clipObservation(y: f64, predicted: f64): f64 {
  if (!(predicted > 0)) return y;
  return min(y, predicted * CLIP_FACTOR);
}

/**
 * TTFT features of the base TTFT (the TTFT without a wait for a batch slot): intercept, uncached
 * prompt tokens (thousands), requests in flight on the host q (at most the slots: beyond them the
 * wait for a slot, predicted apart by slot_wait.ts, is what grows), and the prefill ahead (uncached
 * prompt tokens of streams picked before it and not started yet, thousands: a long prompt
 * prefilled in the same engine step delays the first token).
 */
export const TTFT_K: i32 = 4;
export function ttftFeatures(uncachedTokens: f64, inflight: f64, slots: f64 = 0, prefillAhead: f64 = 0): f64[] {
  return [1.0, uncachedTokens / 1000.0, batchFeature(inflight, slots), max(0.0, prefillAhead) / 1000.0];
}

/** The load feature of both models: requests in flight, at most the slots (when configured). */
function batchFeature(inflight: f64, slots: f64): f64 {
  const q = max(inflight, 0.0);
  return slots > 0 ? min(q, slots) : q;
}

/** theta . [1, x1, x2, x3] cut to k features, never below 0 (a latency); NaN without
 *  coefficients. Scalars, not a features array: the request path predicts a few times per
 *  candidate (ttftFeatures / tpotFeatures are the same features as arrays, for observations). */
function predictK(theta: f64[] | null, k: i32, x1: f64, x2: f64, x3: f64): f64 {
  if (theta === null) return NaN;
  const n = min(theta.length, k);
  let v: f64 = 0;
  if (n > 0) v += theta[0] * 1.0;
  if (n > 1) v += theta[1] * x1;
  if (n > 2) v += theta[2] * x2;
  if (n > 3) v += theta[3] * x3;
  return max(v, 0.0);
}

/**
 * What an observed TTFT teaches the base model: the TTFT minus the predicted wait for a slot it
 * was picked with, weighted by base / (base + wait) (x scaled in place, the scaled target
 * returned): an error of the wait, however small relatively, must not move the base of a host
 * much, yet a host that always queues still learns its base. No wait: the observation as is.
 */
export function baseObservation(x: f64[], ttft: f64, waitMs: f64, baseMs: f64): f64 {
  if (!(waitMs > 0)) return ttft;
  const f = baseMs > 0 ? baseMs / (baseMs + waitMs) : 0.0;
  for (let j = 0; j < x.length; j++) x[j] *= f;
  return (ttft - waitMs) * f;
}

/** TPOT features: intercept, the decode batch the request joins (in flight, at most the slots). */
export const TPOT_K: i32 = 2;
export function tpotFeatures(inflight: f64, slots: f64 = 0): f64[] {
  return [1.0, batchFeature(inflight, slots)];
}

/** One host's fitted coefficients (null: nothing learned, not even for the fleet). */
export class HostModel {
  constructor(public ttft: f64[] | null, public tpot: f64[] | null) {}

  /** Predicted TTFT: the base model plus the predicted wait for a slot (NaN without a model). */
  predictTtft(uncachedTokens: f64, inflight: f64, slots: f64 = 0, waitMs: f64 = 0, prefillAhead: f64 = 0): f64 {
    return predictK(this.ttft, TTFT_K, uncachedTokens / 1000.0, batchFeature(inflight, slots), max(0.0, prefillAhead) / 1000.0) + max(0.0, waitMs);
  }
  predictTpot(inflight: f64, slots: f64 = 0): f64 { return predictK(this.tpot, TPOT_K, batchFeature(inflight, slots), 0, 0); }
}

/**
 * Fits every host: the pooled stats give the fleet prior (small ridge), each host's own stats are
 * pulled toward it with `ridge` (about that many pseudo-observations). Hosts without stats get
 * the prior itself. `nonNegative` (no batch slots configured): no slope below 0
 * (solveNonNegative); with batch slots the slot wait carries the load and the linear terms are
 * its correction, which may be negative (constrained there, 4-slot SLO attainment fell 0.8-4 points).
 */
export function fitHosts(ttftStats: f64[][], tpotStats: f64[][], ridge: f64, nonNegative: bool = false): HostModel[] {
  const n = ttftStats.length;
  const poolT = emptyStats(TTFT_K);
  const poolP = emptyStats(TPOT_K);
  for (let i = 0; i < n; i++) { addStats(poolT, ttftStats[i]); addStats(poolP, tpotStats[i]); }
  const fit: (s: f64[], k: i32, prior: f64[] | null, ridge: f64) => f64[] | null = nonNegative ? solveNonNegative : solve;
  const priorT = fit(poolT, TTFT_K, null, 1e-3 * max(1.0, weightOf(poolT)));
  const priorP = fit(poolP, TPOT_K, null, 1e-3 * max(1.0, weightOf(poolP)));
  const out = new Array<HostModel>(n);
  for (let i = 0; i < n; i++) {
    let t: f64[] | null = null;
    let p: f64[] | null = null;
    if (priorT !== null) t = fit(ttftStats[i], TTFT_K, priorT, ridge);
    if (priorP !== null) p = fit(tpotStats[i], TPOT_K, priorP, ridge);
    out[i] = new HostModel(t, p);
  }
  return out;
}
