// The omniscient central picker: a reference with information no router has (not an upper bound:
// its latency estimate is a heuristic, and prefix_cache beats it on llmd-73, RESULTS 3b). It sees what no real
// gateway can: each simulated engine's true running/waiting counts, its KV pool's prefix cache
// (the simulator's own block hashes) and free blocks, plus every request it has routed whose first
// token has not come back (their blocks will be cached soon: counting them avoids herding the
// followers of a new prefix onto other pods). Per pod it estimates
//   prefill wait  = (routed-but-unstarted prefill + this request's uncached tokens) at the
//                   profile's prefill rate, plus one step base per batch-budget chunk;
//   seat/KV wait  = when the batch is full or the free blocks are short, half this request's
//                   decode length in steps per request ahead;
//   decode cost   = the per-token slowdown of sharing the batch, over this request's output;
// all times the engine's slow factor (a slower pod's steps take longer), and picks the smallest
// sum (ties: fewer running, then lower index).
// Failure behaviour: never throws; a body it cannot read is scored as a 1-token prompt.
import type { SimEngine } from "../host-test/sim/engine.js";
import { extendBlockHashes } from "../host-test/sim/kv.js";
import { chatToPrompt, tokenize, type ChatMessage } from "../host-test/sim/tokenizer.js";
import { holdHashes, releaseHashes } from "./hash-counts.js";
import type { Pick, Picker } from "./picker-proxy.js";

interface Ticket {
  hashes: number[];
  uncached: number;
  blocks: number;
  started: boolean;
}

/** The prompt's tokens as the simulator counts them (chat messages or a completion prompt). */
export function promptTokens(body: unknown): string[] {
  if (typeof body !== "object" || body === null) return ["?"];
  const b = body as { messages?: unknown; prompt?: unknown };
  if (Array.isArray(b.messages)) return tokenize(chatToPrompt(b.messages as ChatMessage[]));
  if (typeof b.prompt === "string") return tokenize(b.prompt);
  return ["?"];
}

export function maxTokensOf(body: unknown): number {
  const b = (body ?? {}) as { max_tokens?: unknown; max_completion_tokens?: unknown };
  const v = b.max_completion_tokens ?? b.max_tokens;
  return typeof v === "number" && v > 0 ? v : 1;
}

export class OmniscientPicker implements Picker {
  protected readonly pendingPrefill: number[];
  private readonly pendingBlocks: number[];
  private readonly pendingHashes: Array<Map<number, number>>;

  constructor(protected readonly pods: ReadonlyArray<{ readonly engine: SimEngine }>) {
    this.pendingPrefill = pods.map(() => 0);
    this.pendingBlocks = pods.map(() => 0);
    this.pendingHashes = pods.map(() => new Map());
  }

  pick(body: unknown): Pick {
    const tokens = promptTokens(body);
    const maxTokens = maxTokensOf(body);
    const blockSize = this.pods[0].engine.profile.blockSize;
    const hashes = extendBlockHashes([], tokens, blockSize, 0);
    const reusable = Math.floor((tokens.length - 1) / blockSize); // vLLM caps the hit at prompt - 1
    let best = 0;
    let bestScore = Infinity;
    let bestRunning = Infinity;
    let bestTicket: Ticket | null = null;
    this.beginPick();
    for (let i = 0; i < this.pods.length; i++) {
      const hitBlocks = Math.max(this.cachedBlocks(i, hashes, reusable), this.pendingChain(i, hashes, reusable));
      const uncached = tokens.length - hitBlocks * blockSize;
      const blocks = Math.ceil((tokens.length + maxTokens) / blockSize) - hitBlocks;
      const { score, running } = this.estimate(i, uncached, blocks, maxTokens, reusable > 0 ? hitBlocks / reusable : 0);
      if (score < bestScore || (score === bestScore && running < bestRunning)) {
        best = i;
        bestScore = score;
        bestRunning = running;
        bestTicket = { hashes: hashes.slice(0, reusable), uncached, blocks, started: false };
      }
    }
    const ticket = bestTicket!;
    this.pendingPrefill[best] += ticket.uncached;
    this.pendingBlocks[best] += ticket.blocks;
    holdHashes(this.pendingHashes[best], ticket.hashes);
    return { pod: best, ticket };
  }

  onFirstByte(pick: Pick): void {
    this.settle(pick);
  }

  onEnd(pick: Pick): void {
    this.settle(pick);
  }

  /** From the first token on, the engine's own state (cache, running, KV usage) shows the request. */
  private settle(pick: Pick): void {
    const t = pick.ticket as Ticket;
    if (t.started) return;
    t.started = true;
    this.pendingPrefill[pick.pod] -= t.uncached;
    this.pendingBlocks[pick.pod] -= t.blocks;
    releaseHashes(this.pendingHashes[pick.pod], t.hashes);
  }

  private cachedBlocks(pod: number, hashes: number[], limit: number): number {
    return this.pods[pod].engine.pool.findCachedPrefix(hashes, limit).length;
  }

  private pendingChain(pod: number, hashes: number[], limit: number): number {
    const pending = this.pendingHashes[pod];
    let n = 0;
    while (n < limit && pending.has(hashes[n])) n++;
    return n;
  }

  /** Called once per pick before the pods are scored (subclasses normalise across pods here). */
  protected beginPick(): void {}

  /** Lower is better. `_hitFraction`: cached-or-pending share of the reusable prefix blocks. */
  protected estimate(pod: number, uncached: number, blocks: number, maxTokens: number, _hitFraction: number): { score: number; running: number } {
    const engine = this.pods[pod].engine;
    const p = engine.profile;
    const running = engine.numRunning() + engine.numWaiting();
    const prefillTokens = this.pendingPrefill[pod] + uncached;
    const prefillWait = prefillTokens * p.prefillMsPerToken + p.stepBaseMs * Math.ceil(prefillTokens / p.maxNumBatchedTokens);
    const stepMs = p.stepBaseMs + p.decodeMsPerSeq * Math.min(running, p.maxNumSeqs);
    const ahead = Math.max(0, running - p.maxNumSeqs + 1);
    const freeBlocks = engine.pool.numFreeBlocks() - this.pendingBlocks[pod];
    const kvShort = blocks > freeBlocks ? 1 + engine.numWaiting() : 0;
    const waitForRoom = (ahead + kvShort) * (maxTokens / 2) * stepMs;
    const decodeCost = p.decodeMsPerSeq * running * maxTokens;
    // Every term is step time, which a slowed engine (slowFactor) stretches alike.
    return { score: (prefillWait + waitForRoom + decodeCost) * engine.slowFactor, running };
  }
}
