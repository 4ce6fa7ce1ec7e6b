// Repeats a workload's sessions `copies` times, each copy reshuffled, with fresh ids: an open-loop
// run longer than the prompt set revisits the same prefixes (inference-perf samples its prompt set
// again and again), which is what makes cache capacity matter. Throws on copies < 1.
import { SeededRandom } from "../../host-test/sim/random.js";
import { shuffle } from "./text.js";
import type { Workload } from "./types.js";

export function repeatWorkload(workload: Workload, copies: number, seed: number): Workload {
  if (!(Number.isInteger(copies) && copies >= 1)) throw new Error(`repeatWorkload: copies must be an integer >= 1, got ${copies}`);
  const rng = new SeededRandom(seed);
  const sessions = [];
  for (let c = 0; c < copies; c++) {
    const copy = workload.sessions.map((s) => ({ ...s, id: `${s.id}#${c}` }));
    sessions.push(...(c === 0 ? copy : shuffle(copy, rng)));
  }
  return { ...workload, sessions };
}
