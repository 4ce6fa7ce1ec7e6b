// predicted_latency's model: the stats fold (same numbers as lua/model.lua), the ridge solve,
// recovery of known coefficients, adaptation after a slowdown, and the fleet prior for cold hosts.
import { baseObservation, clipObservation, emptyStats, foldObservation, parseStats, solve, HostModel, fitHosts, ttftFeatures, tpotFeatures, TTFT_K, TPOT_K, statsLength } from "../policy/predicted_latency/model";
import { Xorshift } from "../util/prng";

/** Batch slots of the engines in these specs: beyond them a request waits for a slot. */
const SLOTS: f64 = 4;

/** Prefill ahead (tokens of requests admitted before this one) costs 20 ms per thousand. */
const PREFILL_MS: f64 = 20;

/** The true base TTFT (no wait for a slot): a + b u + c min(q, slots) + prefill ahead, u in thousands of tokens. */
function truthOf(a: f64, b: f64, c: f64, tokens: f64, q: f64, ahead: f64 = 0): f64 {
  return a + b * tokens / 1000.0 + c * min(q, SLOTS) + PREFILL_MS * ahead / 1000.0;
}

/** Observations of truthOf (TTFT ms) with +-noise. */
function feed(s: f64[], rng: Xorshift, count: i32, a: f64, b: f64, c: f64, noise: f64, decay: f64): void {
  for (let i = 0; i < count; i++) {
    const tokens = <f64>(rng.nextBelow(4000));
    const q = <f64>(rng.nextBelow(12));
    const ahead = rng.nextBelow(2) == 0 ? <f64>rng.nextBelow(3000) : 0.0;
    const jitter = (<f64>rng.nextBelow(2001) / 1000.0 - 1.0) * noise;
    foldObservation(s, TTFT_K, ttftFeatures(tokens, q, SLOTS, ahead), truthOf(a, b, c, tokens, q, ahead) * (1.0 + jitter), decay);
  }
}

describe("latency model stats", () => {
  it("folds x x^T, x y, y y and the weight like model.lua, decaying old sums", () => {
    const s = emptyStats(3);
    foldObservation(s, 3, [1, 2, 3], 100, 1.0);
    expect(s).toStrictEqual([1, 2, 3, 4, 6, 9, 100, 200, 300, 10000, 1]);
    foldObservation(s, 3, [1, 0, 0], 10, 0.5);
    expect(s).toStrictEqual([1.5, 1, 1.5, 2, 3, 4.5, 60, 100, 150, 5100, 1.5]);
  });
  it("refuses an observation whose sums are not finite, restarts sums it would overflow (as model.lua): the fleet fit stays", () => {
    const s = emptyStats(TTFT_K);
    for (let i = 0; i < 20; i++) expect(foldObservation(s, TTFT_K, ttftFeatures(<f64>(i % 4) * 1000, <f64>(i % 3)), 20 + 40 * <f64>(i % 4), 0.99)).toBe(true);
    const before = s.slice(0);
    // A corrupt count (1e200 requests in flight, no batch slots): its square is not finite.
    expect(foldObservation(s, TTFT_K, ttftFeatures(0, 1e200), 20, 0.99)).toBe(false);
    for (let j = 0; j < s.length; j++) expect(s[j]).toBe(before[j]);
    const fit = fitHosts([s, emptyStats(TTFT_K)], [emptyStats(TPOT_K), emptyStats(TPOT_K)], 2);
    expect(isFinite(fit[0].predictTtft(1000, 1))).toBe(true);
    // Sums at the edge of a double: the next observation restarts them from itself.
    const edge = emptyStats(TPOT_K);
    edge[2] = 1.7e308;
    expect(foldObservation(edge, TPOT_K, [1.0, 1.3e154], 5, 1.0)).toBe(true);
    for (let j = 0; j < edge.length; j++) expect(isFinite(edge[j])).toBe(true);
    expect(edge[edge.length - 1]).toBe(1);
  });

  it("parses model.lua's field and refuses a wrong length or a non-number", () => {
    const p = parseStats(2, "1 4 16 7 28 49 1");
    expect(p).not.toBeNull();
    expect(p!).toStrictEqual([1, 4, 16, 7, 28, 49, 1]);
    expect(parseStats(2, "1 4 16")).toBeNull();
    expect(parseStats(2, "1 4 16 7 28 x 1")).toBeNull();
    expect(statsLength(3)).toBe(11);
  });
});

/** Relative error at (2000 tokens, 4 in flight) after 500 observations of a host, then `after` of it 2x slower. */
function errorAfterSlowdown(decay: f64, after: i32): f64 {
  const s = emptyStats(TTFT_K);
  const rng = new Xorshift(3);
  feed(s, rng, 500, 20, 50, 8, 0.05, decay);
  feed(s, rng, after, 40, 100, 16, 0.05, decay);
  const truth = truthOf(40, 100, 16, 2000, 3);
  return abs(new HostModel(solve(s, TTFT_K, null, 1e-3), null).predictTtft(2000, 3, SLOTS) - truth) / truth;
}

describe("latency model fit", () => {
  it("recovers the coefficients of noiseless data", () => {
    const s = emptyStats(TTFT_K);
    feed(s, new Xorshift(7), 200, 20, 50, 8, 0, 1.0);
    const t = solve(s, TTFT_K, null, 0)!;
    expect(t[0]).toBeCloseTo(20, 6);
    expect(t[1]).toBeCloseTo(50, 6);
    expect(t[2]).toBeCloseTo(8, 6);
    expect(t[3]).toBeCloseTo(PREFILL_MS, 6);
  });
  it("learns the base TTFT from waited observations: the wait off, weighted by base / (base + wait)", () => {
    const weighted = emptyStats(TTFT_K);
    const plain = emptyStats(TTFT_K);
    const alwaysWaits = emptyStats(TTFT_K);
    const rng = new Xorshift(5);
    for (let i = 0; i < 400; i++) {
      const tokens = <f64>rng.nextBelow(4000);
      const q = <f64>rng.nextBelow(12);
      const base = truthOf(20, 50, 2, tokens, q);
      // A full engine: a predicted wait of 0-400 ms, off by up to +-40% (when running requests end).
      const wait = q + 1.0 > SLOTS ? <f64>rng.nextBelow(400) : 0.0;
      const err = (<f64>rng.nextBelow(2001) / 1000.0 - 1.0) * 0.4;
      const y = base + wait * (1.0 + err);
      let x = ttftFeatures(tokens, q, SLOTS);
      foldObservation(weighted, TTFT_K, x, baseObservation(x, y, wait, base), 0.995);
      x = ttftFeatures(tokens, q, SLOTS);
      foldObservation(plain, TTFT_K, x, y - wait, 0.995);
      x = ttftFeatures(tokens, q, SLOTS);
      const exactWait = 50.0 + <f64>rng.nextBelow(300);
      foldObservation(alwaysWaits, TTFT_K, x, baseObservation(x, base + exactWait, exactWait, base), 0.995);
    }
    let errW: f64 = 0, errP: f64 = 0, errA: f64 = 0;
    for (let t = 0; t < 4000; t += 500) {
      for (let q = 0; q < 8; q++) {
        const truth = truthOf(20, 50, 2, <f64>t, <f64>q);
        errW = max(errW, abs(new HostModel(solve(weighted, TTFT_K, null, 1e-3), null).predictTtft(<f64>t, <f64>q, SLOTS) - truth) / truth);
        errP = max(errP, abs(new HostModel(solve(plain, TTFT_K, null, 1e-3), null).predictTtft(<f64>t, <f64>q, SLOTS) - truth) / truth);
        errA = max(errA, abs(new HostModel(solve(alwaysWaits, TTFT_K, null, 1e-3), null).predictTtft(<f64>t, <f64>q, SLOTS) - truth) / truth);
      }
    }
    expect(errW).toBeLessThan(0.15);
    expect(errP).toBeGreaterThan(errW * 1.5);
    // A host that always waits still learns its base (exact waits here).
    expect(errA).toBeLessThan(0.01);
    // No wait: the observation as is; a wait: x scaled, the scaled target returned.
    const x = [1.0, 2.0, 3.0];
    expect(baseObservation(x, 70, 0, 50)).toBe(70);
    expect(x).toStrictEqual([1.0, 2.0, 3.0]);
    expect(baseObservation(x, 150, 100, 50)).toBeCloseTo(50.0 / 3.0, 9);
    expect(x[1]).toBeCloseTo(2.0 / 3.0, 9);
    // No base predicted yet: a waited observation teaches nothing.
    expect(baseObservation(x, 150, 100, 0)).toBe(0);
  });
  it("predicts the TTFT as the base plus the predicted wait", () => {
    const m = fitHosts([emptyStats(TTFT_K)], [emptyStats(TPOT_K)], 2.0)[0];
    expect(m.predictTtft(1000, 4, SLOTS, 200)).toBeNaN();
    const s = emptyStats(TTFT_K);
    feed(s, new Xorshift(9), 100, 20, 50, 8, 0, 1.0);
    const h = fitHosts([s], [emptyStats(TPOT_K)], 2.0)[0];
    expect(h.predictTtft(1000, 6, SLOTS, 200)).toBeCloseTo(truthOf(20, 50, 8, 1000, 6) + 200, 2);
    expect(h.predictTtft(1000, 6, SLOTS, 0)).toBeCloseTo(truthOf(20, 50, 8, 1000, 6), 2);
  });
  it("predicts within 10% at the 90th percentile after 300 noisy observations (+-10% noise)", () => {
    const s = emptyStats(TTFT_K);
    const rng = new Xorshift(11);
    feed(s, rng, 300, 20, 50, 8, 0.1, 0.995);
    const t = solve(s, TTFT_K, null, 1e-3);
    let within = 0;
    for (let i = 0; i < 100; i++) {
      const tokens = <f64>rng.nextBelow(4000);
      const q = <f64>rng.nextBelow(12);
      const truth = truthOf(20, 50, 8, tokens, q);
      if (abs(new HostModel(t, null).predictTtft(tokens, q, SLOTS) - truth) / truth <= 0.1) within++;
    }
    expect(within).toBeGreaterThanOrEqual(90);
  });
  it("adapts to a host that became 2x slower within a few hundred observations", () => {
    expect(errorAfterSlowdown(0.99, 300)).toBeLessThan(0.1);
  });
  it("without decay the old regime would dominate (the decay is what adapts)", () => {
    expect(errorAfterSlowdown(1.0, 100)).toBeGreaterThan(0.2);
  });
  it("is null with nothing observed, or singular without ridge", () => {
    expect(solve(emptyStats(TTFT_K), TTFT_K, null, 0)).toBeNull();
    const s = emptyStats(TTFT_K);
    foldObservation(s, TTFT_K, ttftFeatures(1000, 2, SLOTS), 50, 1.0);
    expect(solve(s, TTFT_K, null, 0)).toBeNull();
    expect(solve(s, TTFT_K, null, 1e-3)).not.toBeNull();
    expect(new HostModel(null, null).predictTtft(1000, 2)).toBeNaN();
    expect(new HostModel(null, null).predictTpot(2)).toBeNaN();
  });
});

describe("fitHosts: heterogeneous hosts and the fleet prior", () => {
  it("gives each host its own coefficients, and a host never observed the fleet's", () => {
    const rng = new Xorshift(5);
    const fast = emptyStats(TTFT_K);
    const slow = emptyStats(TTFT_K);
    feed(fast, rng, 300, 20, 50, 8, 0.02, 0.995);
    feed(slow, rng, 300, 40, 100, 16, 0.02, 0.995);
    const fastP = emptyStats(TPOT_K);
    const slowP = emptyStats(TPOT_K);
    for (let q = 0; q < 20; q++) {
      foldObservation(fastP, TPOT_K, tpotFeatures(<f64>q), 10 + 0.5 * q, 1.0);
      foldObservation(slowP, TPOT_K, tpotFeatures(<f64>q), 20 + 1.0 * q, 1.0);
    }
    const models = fitHosts([fast, slow, emptyStats(TTFT_K)], [fastP, slowP, emptyStats(TPOT_K)], 2.0);
    const f = models[0].predictTtft(2000, 4, SLOTS);
    const sl = models[1].predictTtft(2000, 4, SLOTS);
    expect(abs(f - 152) / 152).toBeLessThan(0.05);
    expect(abs(sl - 304) / 304).toBeLessThan(0.05);
    expect(abs(models[0].predictTpot(10) - 15)).toBeLessThan(0.5);
    expect(abs(models[1].predictTpot(10) - 30)).toBeLessThan(0.5);
    // The cold host predicts between the two (the pooled fit), not NaN.
    const cold = models[2].predictTtft(2000, 4, SLOTS);
    expect(cold).toBeGreaterThan(f);
    expect(cold).toBeLessThan(sl);
  });
  it("predicts NaN when the whole fleet observed nothing", () => {
    const models = fitHosts([emptyStats(TTFT_K)], [emptyStats(TPOT_K)], 2.0);
    expect(models[0].predictTtft(100, 1)).toBeNaN();
  });
});

describe("clipObservation", () => {
  it("caps an outlier at 3x the prediction, passes it through without one", () => {
    expect(clipObservation(500, 20)).toBe(60);
    expect(clipObservation(30, 20)).toBe(30);
    expect(clipObservation(500, NaN)).toBe(500);
    expect(clipObservation(500, 0)).toBe(500);
  });
});
