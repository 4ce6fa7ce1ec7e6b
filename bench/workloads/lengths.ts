// Length distributions of workload generators, in simulator tokens: a fixed number,
// inference-perf's truncated normal {mean, std_dev, min, max}, or a log-normal with the given
// mean (ShareGPT-like tails) clamped to [min, max]. Always returns an integer >= 1; never fails
// (a truncated normal whose window is never hit after a few draws is clamped).
import { SeededRandom } from "../../host-test/sim/random.js";

export interface TruncatedNormal { mean: number; std_dev: number; min: number; max: number }
export interface LogNormalLength { log_normal_mean: number; sigma: number; min: number; max: number }
export type LengthSpec = number | TruncatedNormal | LogNormalLength;

const MAX_REDRAWS = 16;

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

export function sampleLength(spec: LengthSpec, rng: SeededRandom): number {
  if (typeof spec === "number") return Math.max(1, Math.round(spec));
  if ("log_normal_mean" in spec) {
    return Math.max(1, Math.round(clamp(rng.logNormal(spec.log_normal_mean, spec.sigma), spec.min, spec.max)));
  }
  // Truncated normal by rejection, as inference-perf samples it; clamp as a last resort.
  let value = spec.mean + spec.std_dev * rng.normal();
  for (let i = 0; i < MAX_REDRAWS && (value < spec.min || value > spec.max); i++) {
    value = spec.mean + spec.std_dev * rng.normal();
  }
  return Math.max(1, Math.round(clamp(value, spec.min, spec.max)));
}

/** The expected value of a spec (for sizing scenarios; the log-normal's mean ignores clamping). */
export function meanLength(spec: LengthSpec): number {
  if (typeof spec === "number") return spec;
  if ("log_normal_mean" in spec) return spec.log_normal_mean;
  return spec.mean;
}
