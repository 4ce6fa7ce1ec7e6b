// AdaptiveScore's per-service state and score, with Higress's formula (higress-parity.md section 8):
//   inflight = ongoing + 1, plus (consecutive errors + 1) while the service is cooling down;
//   no TTFT and no total-latency sample yet -> score = inflight (metrics_missing_policy least_busy);
//   else a missing one of the two takes the other's value and
//   score = (wT*sqrt(TTFT+1) + wR*sqrt(RT+1)) * inflight * (1 + error_penalty * errors/(successes+errors)).
// EWMA: the first sample sets it, then new = beta*old + (1-beta)*sample (beta = ewma_beta).
// Pure (times are passed in), never traps.

export function ewma(old: f64, sample: f64, beta: f64, initialized: bool): f64 {
  return initialized ? beta * old + (1.0 - beta) * sample : sample;
}

export class AdaptiveState {
  ewmaTtft: f64 = 0;
  ewmaTotal: f64 = 0;
  hasTtft: bool = false;
  hasTotal: bool = false;
  successes: i64 = 0;
  errors: i64 = 0;
  consecutiveErrors: i64 = 0;
  cooldownUntilMs: f64 = 0;

  recordTtft(ms: f64, beta: f64): void {
    this.ewmaTtft = ewma(this.ewmaTtft, ms, beta, this.hasTtft);
    this.hasTtft = true;
  }

  /** A finished request: its total latency, and whether it failed (cooldownMs 0 = no cooldown). */
  recordTotal(ms: f64, beta: f64, failed: bool, nowMs: f64, cooldownMs: i64): void {
    this.ewmaTotal = ewma(this.ewmaTotal, ms, beta, this.hasTotal);
    this.hasTotal = true;
    if (failed) {
      this.errors++;
      this.consecutiveErrors++;
      if (cooldownMs > 0) this.cooldownUntilMs = nowMs + <f64>cooldownMs;
      return;
    }
    this.successes++;
    this.consecutiveErrors = 0;
  }

  coolingDown(nowMs: f64): bool { return this.cooldownUntilMs > nowMs; }
}

export class ScoreWeights {
  constructor(public ttft: f64, public total: f64, public errorPenalty: f64) {}
}

export function adaptiveScore(st: AdaptiveState, ongoing: i64, nowMs: f64, w: ScoreWeights): f64 {
  let inflight = <f64>(ongoing + 1);
  if (st.coolingDown(nowMs)) inflight += <f64>(st.consecutiveErrors + 1);
  if (!st.hasTtft && !st.hasTotal) return inflight;
  const ttft = st.hasTtft ? st.ewmaTtft : st.ewmaTotal;
  const total = st.hasTotal ? st.ewmaTotal : st.ewmaTtft;
  const latency = w.ttft * Math.sqrt(ttft + 1.0) + w.total * Math.sqrt(total + 1.0);
  const n = st.successes + st.errors;
  const errorRate = n > 0 ? <f64>st.errors / <f64>n : 0.0;
  return latency * inflight * (1.0 + w.errorPenalty * errorRate);
}
