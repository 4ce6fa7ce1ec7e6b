// Open-loop arrival times for load stages `[rate x duration]` (inference-perf's load stages):
// Poisson (exponential gaps) or constant spacing, in SIMULATED ms from the start of the run;
// rates are requests per simulated second. A stage with rate 0 is a pause. Seeded and pure.
// Throws on a negative rate or duration (scenario definition error).
import type { SeededRandom } from "../host-test/sim/random.js";

export interface Stage {
  /** Requests per simulated second. */
  rate: number;
  /** Simulated ms. */
  durationMs: number;
}

export type ArrivalProcess = "poisson" | "constant";

export function arrivalTimes(stages: readonly Stage[], process: ArrivalProcess, rng: SeededRandom): number[] {
  const times: number[] = [];
  let stageStart = 0;
  for (const [i, stage] of stages.entries()) {
    if (!(stage.rate >= 0 && stage.durationMs >= 0)) throw new Error(`stage ${i}: rate and durationMs must be >= 0, got ${stage.rate} x ${stage.durationMs}`);
    const end = stageStart + stage.durationMs;
    if (stage.rate > 0) {
      const meanGap = 1000 / stage.rate;
      // Poisson is memoryless, so restarting the clock at each stage boundary is exact.
      let t = stageStart + (process === "poisson" ? -Math.log(1 - rng.next()) * meanGap : 0);
      while (t < end) {
        times.push(t);
        t += process === "poisson" ? -Math.log(1 - rng.next()) * meanGap : meanGap;
      }
    }
    stageStart = end;
  }
  return times;
}

export function stagesDurationMs(stages: readonly Stage[]): number {
  return stages.reduce((sum, s) => sum + s.durationMs, 0);
}
