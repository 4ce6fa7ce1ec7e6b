// NVIDIA Dynamo's KV router as a central picker, with its defaults (overlap score weight 1,
// temperature 0). Per request and worker:
//   overlap        = the worker's cached prefix blocks, from its KV events (here the engine's true
//                    cache, as precise_prefix reads it);
//   prefill blocks = (prefill tokens the router has sent the worker whose first token has not come
//                    back + this request's uncached tokens) / block size;
//   decode blocks  = the worker's active blocks (distinct prompt blocks of its open requests, plus
//                    their partial and generated blocks) + the blocks this request would add;
//   logit = weight x prefill blocks + decode blocks; the lowest wins (ties: a seeded random one).
// Not emulated: the router-side queue of newer releases (off unless a queue threshold is set),
// replica sync between several routers (one router here), approximate mode without KV events.
// Failure behaviour: never throws; a body it cannot read is a 1-token prompt.
import type { SimEngine } from "../../host-test/sim/engine.js";
import { extendBlockHashes } from "../../host-test/sim/kv.js";
import { SeededRandom } from "../../host-test/sim/random.js";
import { holdHashes, releaseHashes } from "../hash-counts.js";
import { promptTokens } from "../omniscient-picker.js";
import type { Pick, Picker } from "../picker-proxy.js";

export const DYNAMO_DEFAULTS = { overlapWeight: 1, seed: 1 };

interface Ticket {
  worker: number;
  prefillTokens: number;
  /** Full prompt blocks counted in the worker's distinct active blocks. */
  hashes: number[];
  /** Blocks of its own: the partial prompt block and the generated ones. */
  ownBlocks: number;
  tokens: number;
  blockSize: number;
  started: boolean;
  ended: boolean;
}

export class DynamoKvPicker implements Picker {
  private readonly pendingPrefill: number[];
  private readonly active: Array<Map<number, number>>;
  private readonly ownBlocks: number[];
  private readonly rng: SeededRandom;

  constructor(private readonly pods: ReadonlyArray<{ readonly engine: SimEngine }>, private readonly cfg = DYNAMO_DEFAULTS) {
    this.pendingPrefill = pods.map(() => 0);
    this.active = pods.map(() => new Map<number, number>());
    this.ownBlocks = pods.map(() => 0);
    this.rng = new SeededRandom(cfg.seed);
  }

  pick(body: unknown): Pick {
    const tokens = promptTokens(body);
    const blockSize = this.pods[0].engine.profile.blockSize;
    const hashes = extendBlockHashes([], tokens, blockSize, 0);
    const partial = tokens.length % blockSize > 0 ? 1 : 0;
    let best: number[] = [];
    let bestLogit = Infinity;
    const uncachedOf: number[] = [];
    for (let w = 0; w < this.pods.length; w++) {
      const overlap = this.pods[w].engine.pool.findCachedPrefix(hashes, hashes.length).length;
      const uncached = tokens.length - overlap * blockSize;
      uncachedOf.push(uncached);
      const prefillBlocks = (this.pendingPrefill[w] + uncached) / blockSize;
      const active = this.active[w];
      let added = partial;
      for (const h of hashes) if (!active.has(h)) added++;
      const decodeBlocks = active.size + this.ownBlocks[w] + added;
      const logit = this.cfg.overlapWeight * prefillBlocks + decodeBlocks;
      if (logit < bestLogit) { bestLogit = logit; best = [w]; } else if (logit === bestLogit) best.push(w);
    }
    const worker = best.length === 1 ? best[0] : best[Math.floor(this.rng.next() * best.length)];
    const ticket: Ticket = { worker, prefillTokens: uncachedOf[worker], hashes, ownBlocks: partial, tokens: tokens.length, blockSize, started: false, ended: false };
    this.pendingPrefill[worker] += ticket.prefillTokens;
    holdHashes(this.active[worker], hashes);
    this.ownBlocks[worker] += ticket.ownBlocks;
    return { pod: worker, ticket, debug: `dynamo:logit=${bestLogit.toFixed(1)}` };
  }

  onFirstByte(pick: Pick): void {
    this.prefilled(pick.ticket as Ticket);
  }

  /** A generated token: the request's blocks grow by one every block size of tokens. */
  onToken(pick: Pick): void {
    const t = pick.ticket as Ticket;
    if (t.ended) return;
    t.tokens++;
    const own = Math.ceil(t.tokens / t.blockSize) - t.hashes.length;
    if (own > t.ownBlocks) { this.ownBlocks[t.worker] += own - t.ownBlocks; t.ownBlocks = own; }
  }

  onEnd(pick: Pick): void {
    const t = pick.ticket as Ticket;
    if (t.ended) return;
    this.prefilled(t);
    t.ended = true;
    releaseHashes(this.active[t.worker], t.hashes);
    this.ownBlocks[t.worker] -= t.ownBlocks;
  }

  private prefilled(t: Ticket): void {
    if (t.started) return;
    t.started = true;
    this.pendingPrefill[t.worker] -= t.prefillTokens;
  }
}
