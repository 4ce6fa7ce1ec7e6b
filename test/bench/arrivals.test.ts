// Arrival schedules: constant spacing, Poisson counts, pauses, seeding.
import { describe, expect, it } from "vitest";
import { SeededRandom } from "../../host-test/sim/random.js";
import { arrivalTimes, stagesDurationMs } from "../../bench/arrivals.js";

describe("arrivalTimes", () => {
  it("spaces constant arrivals exactly, stage after stage", () => {
    const t = arrivalTimes([{ rate: 10, durationMs: 500 }, { rate: 2, durationMs: 1000 }], "constant", new SeededRandom(1));
    expect(t).toEqual([0, 100, 200, 300, 400, 500, 1000]);
  });

  it("draws about rate x duration Poisson arrivals, all inside their stage", () => {
    const t = arrivalTimes([{ rate: 50, durationMs: 20_000 }], "poisson", new SeededRandom(3));
    expect(t.length).toBeGreaterThan(900);
    expect(t.length).toBeLessThan(1100);
    expect(t.every((x, i) => x >= 0 && x < 20_000 && (i === 0 || x >= t[i - 1]))).toBe(true);
    const gaps = t.slice(1).map((x, i) => x - t[i]);
    const cv = Math.sqrt(gaps.reduce((a, g) => a + (g - 20) ** 2, 0) / gaps.length) / 20;
    expect(cv).toBeGreaterThan(0.85); // exponential gaps: coefficient of variation ~1
  });

  it("treats rate 0 as a pause and is repeatable", () => {
    const stages = [{ rate: 5, durationMs: 1000 }, { rate: 0, durationMs: 5000 }, { rate: 5, durationMs: 1000 }];
    const t = arrivalTimes(stages, "poisson", new SeededRandom(9));
    expect(t.some((x) => x >= 1000 && x < 6000)).toBe(false);
    expect(t).toEqual(arrivalTimes(stages, "poisson", new SeededRandom(9)));
    expect(stagesDurationMs(stages)).toBe(7000);
  });

  it("refuses negative rates", () => {
    expect(() => arrivalTimes([{ rate: -1, durationMs: 10 }], "constant", new SeededRandom(1))).toThrow(/stage 0/);
  });
});
