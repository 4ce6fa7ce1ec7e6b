// The "precise prefix" central picker, llm-d's top row made concrete: the Endpoint Picker's
// weighted scorers with its default weights (prefix 3, queue 2, KV utilisation 2, max score
// wins) fed with what KV events would give it: each engine's TRUE prefix cache (plus prompts
// already routed there whose first token has not come back, as OmniscientPicker tracks them),
// true queue lengths and KV usage. Scores: prefix = matched share of the reusable blocks;
// queue = (maxQ - q) / (maxQ - minQ) over the pods (1 when all equal); kv = 1 - usage.
// A second, prefix-aware bound next to the omniscient latency estimate, which on KV-bound shapes
// trades cache affinity for balance. Failure behaviour: never throws.
import { OmniscientPicker } from "./omniscient-picker.js";

const W_PREFIX = 3;
const W_QUEUE = 2;
const W_KV = 2;

export class PrecisePrefixPicker extends OmniscientPicker {
  private minQ = 0;
  private maxQ = 0;

  private queue(pod: number): number {
    const e = this.pods[pod].engine;
    return e.numRunning() + e.numWaiting();
  }

  protected override beginPick(): void {
    this.minQ = Infinity;
    this.maxQ = -Infinity;
    for (let i = 0; i < this.pods.length; i++) {
      const q = this.queue(i);
      this.minQ = Math.min(this.minQ, q);
      this.maxQ = Math.max(this.maxQ, q);
    }
  }

  protected override estimate(pod: number, _uncached: number, _blocks: number, _maxTokens: number, hitFraction: number): { score: number; running: number } {
    const q = this.queue(pod);
    const queueScore = this.maxQ === this.minQ ? 1 : (this.maxQ - q) / (this.maxQ - this.minQ);
    const kvScore = 1 - this.pods[pod].engine.pool.usage();
    return { score: -(W_PREFIX * hitFraction + W_QUEUE * queueScore + W_KV * kvScore), running: q };
  }
}
