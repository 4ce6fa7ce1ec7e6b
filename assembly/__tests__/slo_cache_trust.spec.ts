// predicted_latency's trust in the prefix tree per host (cache_trust.ts): the moving mean of the
// share of what the tree said was cached that the engine's usage says it found, held as the sums
// model.lua folds (so every gateway adds to and reads the same trust).
import { TRUST_ALPHA, TRUST_DECAY, TRUST_K, TRUST_MIN_SAID, trustObservation, trustOf } from "../policy/predicted_latency/cache_trust";
import { emptyStats, foldObservation, parseStats } from "../policy/predicted_latency/model";

function fold(s: f64[], y: f64): void {
  const one: f64[] = [1.0];
  foldObservation(s, TRUST_K, one, y, TRUST_DECAY);
}

describe("trustObservation", () => {
  it("is found / said, at most 1", () => {
    expect(trustObservation(0.8, 0.4)).toBe(0.5);
    expect(trustObservation(0.5, 0.9)).toBe(1.0); // found more than said: all of it
    expect(trustObservation(0.5, 0.0)).toBe(0.0);
  });
  it("teaches nothing when the tree said little was cached, or the answer carried no usage", () => {
    expect(isNaN(trustObservation(TRUST_MIN_SAID * 0.5, 0.0))).toBe(true);
    expect(isNaN(trustObservation(0.9, -1))).toBe(true);
    expect(isNaN(trustObservation(NaN, 0.0))).toBe(true);
  });
});

describe("trustOf (the sums of model.lua's field <host>|c)", () => {
  it("is 1 before any answer", () => {
    expect(trustOf(emptyStats(TRUST_K))).toBe(1.0);
  });
  it("is the moving mean from 1 with weight TRUST_ALPHA per answer", () => {
    const s = emptyStats(TRUST_K);
    let mean: f64 = 1.0;
    const ys: f64[] = [0.0, 0.5, 0.25, 1.0, 0.0, 0.0, 0.75];
    for (let i = 0; i < ys.length; i++) {
      fold(s, ys[i]);
      mean += TRUST_ALPHA * (ys[i] - mean);
      expect(trustOf(s)).toBeCloseTo(mean, 12);
    }
    expect(trustOf(s)).toBeLessThan(0.8);
  });
  it("settles at what the answers say, and a host that keeps its cache again is trusted again", () => {
    const s = emptyStats(TRUST_K);
    for (let i = 0; i < 200; i++) fold(s, 0.25);
    expect(trustOf(s)).toBeCloseTo(0.25, 3);
    for (let i = 0; i < 200; i++) fold(s, 1.0);
    expect(trustOf(s)).toBeCloseTo(1.0, 3);
  });
  it("reads model.lua's text of the field, and stays within [0, 1] whatever the sums", () => {
    const s = parseStats(TRUST_K, "1.9 0.9 0.81 1.9")!; // two answers: 0 then 1
    expect(trustOf(s)).toBeCloseTo(1.0 + TRUST_ALPHA * (0.9 - 1.9), 12);
    expect(trustOf([1.0, 100.0, 0.0, 1.0])).toBe(1.0);
    expect(trustOf([100.0, 0.0, 0.0, 100.0])).toBe(0.0);
    expect(trustOf([NaN, 0.0, 0.0, 1.0])).toBe(1.0);
  });
});
