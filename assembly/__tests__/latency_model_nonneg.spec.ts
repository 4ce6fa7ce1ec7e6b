// predicted_latency's model without batch slots: no slope below 0 (model.ts solveNonNegative,
// fitHosts(nonNegative)). The in-flight count is then the only load signal, and a negative slope
// made a loaded pod look faster the more it was sent.
import { emptyStats, fitHosts, foldObservation, solve, solveNonNegative, tpotFeatures, TPOT_K, ttftFeatures, TTFT_K } from "../policy/predicted_latency/model";

/** TPOT observations that fall as the in-flight count grows (30 ms alone, 1 ms less per request). */
function falling(): f64[] {
  const s = emptyStats(TPOT_K);
  for (let q = 0; q < 10; q++) foldObservation(s, TPOT_K, tpotFeatures(<f64>q), 30 - <f64>q, 1);
  return s;
}

/** TTFT observations: 20 ms + 40 ms per 1,000 uncached tokens, 2 ms per request in flight. */
function rising(): f64[] {
  const s = emptyStats(TTFT_K);
  for (let u = 0; u < 4; u++) {
    for (let q = 0; q < 6; q++) foldObservation(s, TTFT_K, ttftFeatures(<f64>u * 1000, <f64>q), 20 + 40 * <f64>u + 2 * <f64>q, 1);
  }
  return s;
}

describe("solveNonNegative", () => {
  it("fixes a negative slope at 0 and fits the rest (here the intercept: the mean)", () => {
    const s = falling();
    expect(solve(s, TPOT_K, null, 1e-6)![1]).toBeCloseTo(-1);
    const t = solveNonNegative(s, TPOT_K, null, 1e-6)!;
    expect(t[1]).toBe(0);
    expect(t[0]).toBeCloseTo(25.5); // the mean of 30 .. 21
  });
  it("gives solve's coefficients when none is negative", () => {
    const s = rising();
    const a = solve(s, TTFT_K, null, 1e-6)!;
    const b = solveNonNegative(s, TTFT_K, null, 1e-6)!;
    for (let j = 0; j < TTFT_K; j++) expect(b[j]).toBe(a[j]);
    expect(b[1]).toBeCloseTo(40);
    expect(b[2]).toBeCloseTo(2);
  });
  it("fits when a second slope must be fixed (a fixed one comes back as -0 from the elimination, not below 0)", () => {
    // Four hosts' TTFT stats, pooled, from a higress run (bench/RESULTS.md 12.1k): the uncached
    // slope goes below 0, then the in-flight one; solved again it came back as -3e-16, was fixed
    // again, and after k rounds the fit was null: no model at all, every pick the fallback.
    const s: f64[] = [21.751495010120003, 2.4301315609745, 48.646322252625, 3.488876358355, 0.39238757732420004,
      6.602876358255, 0.30702111950485, 160.14727149565002, 10.484959892055, 0.922676470329, 521.3515025165,
      55.424932217800006, 1188.121613369, 89.77070198164999, 13088.238037715, 21.751495010120003];
    const t = solveNonNegative(s, TTFT_K, null, 1e-3 * 21.751495010120003);
    expect(t).not.toBeNull();
    for (let j = 1; j < TTFT_K; j++) expect(t![j]).toBeGreaterThanOrEqual(0);
    expect(t![1]).toBe(0);
    expect(t![2]).toBe(0);
    expect(t![3]).toBeGreaterThan(0);
  });
  it("fitHosts applies it only when asked (no batch slots configured)", () => {
    const t = [rising()];
    const p = [falling()];
    expect(fitHosts(t, p, 2)[0].tpot![1]).toBeLessThan(0);
    expect(fitHosts(t, p, 2, true)[0].tpot![1]).toBe(0);
  });
});
