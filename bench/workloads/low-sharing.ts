// Low-sharing control (ShareGPT-like single turn): no system prompt, log-normal input and output
// lengths (means ~160 in / ~340 out in the published control). Prefix-aware routing must not
// regress here. Throws only on a negative count (scenario definition error).
import { SeededRandom } from "../../host-test/sim/random.js";
import { sampleLength, type LengthSpec } from "./lengths.js";
import { randomWords } from "./text.js";
import type { Workload } from "./types.js";

export interface LowSharingParams {
  count: number;
  input_len: LengthSpec;
  output_len: LengthSpec;
}

export const SHAREGPT_LIKE: Omit<LowSharingParams, "count"> = {
  input_len: { log_normal_mean: 160, sigma: 0.8, min: 4, max: 1024 },
  output_len: { log_normal_mean: 340, sigma: 0.7, min: 4, max: 1024 },
};

export function lowSharingWorkload(name: string, params: LowSharingParams, seed: number, tag?: string): Workload {
  if (!(Number.isInteger(params.count) && params.count >= 0)) throw new Error(`${name}: count must be an integer >= 0, got ${params.count}`);
  const rng = new SeededRandom(seed);
  return {
    name,
    followUps: "queued",
    sessions: Array.from({ length: params.count }, (_, i) => ({
      id: `${tag ?? "r"}-${i}`,
      group: -1,
      systemPrompt: null,
      tag,
      turns: [{ question: randomWords(rng, sampleLength(params.input_len, rng)), outputTokens: sampleLength(params.output_len, rng) }],
    })),
  };
}
