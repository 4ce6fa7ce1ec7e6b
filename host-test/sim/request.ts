// One request inside the simulated engine: its token sequence (prompt + generated words), KV
// blocks, progress, and the events a server listens to.
// Events (simulated-ms timestamps):
//   "firstToken" (token: TokenEvent)   once, just before the first "token"
//   "token"      (token: TokenEvent)   every generated token; the last carries finishReason
//   "done"       (result: RequestResult) exactly once (finished or aborted)
// Failure behaviour: abort() is idempotent; after "done" nothing else is emitted.
import { EventEmitter } from "node:events";
import type { KvBlock } from "./kv.js";
import { SeededRandom } from "./random.js";
import type { FinishReason } from "./stats.js";

export interface TokenEvent {
  text: string;
  /** 0-based index among output tokens. */
  index: number;
  atMs: number;
  /** Set on the last token. */
  finishReason: "stop" | "length" | null;
}

export interface RequestResult {
  id: string;
  promptTokens: number;
  /** Prefix-cache hit at first admission, in tokens (usage.prompt_tokens_details.cached_tokens). */
  cachedTokens: number;
  outputTokens: number;
  finishReason: FinishReason;
  arrivalMs: number;
  firstTokenMs: number | null;
  finishMs: number;
  /** Simulated milliseconds from arrival; null if no token was produced. */
  ttftMs: number | null;
  e2eMs: number;
  preemptions: number;
}

export interface SimRequestEvents {
  firstToken: [TokenEvent];
  token: [TokenEvent];
  done: [RequestResult];
}

export type RequestStatus = "waiting" | "running" | "finished";

export class SimRequest extends EventEmitter<SimRequestEvents> {
  readonly id: string;
  /** Prompt tokens followed by generated tokens. */
  readonly tokens: string[];
  readonly promptLength: number;
  readonly maxTokens: number;
  /** Output length this request will stop at (max_tokens, or a sampled EOS point). */
  readonly targetOutputTokens: number;
  readonly lora: string | null;
  readonly arrivalMs: number;
  /** Simulated time the request reaches the scheduler (arrival + API overhead). */
  readonly readyAtMs: number;
  status: RequestStatus = "waiting";
  /** Tokens whose KV is computed; the newest sampled token is not (it is next step's input). */
  numComputed = 0;
  blocks: KvBlock[] = [];
  /** Memo of chained full-block hashes of `tokens`. */
  readonly blockHashes: number[] = [];
  /** Leading blocks already registered in the prefix cache. */
  numRegisteredBlocks = 0;
  cachedTokens = -1;
  firstTokenMs: number | null = null;
  lastTokenMs: number | null = null;
  preemptions = 0;
  /** Set by the engine; aborting a request it owns frees its blocks. */
  onAbort: ((request: SimRequest) => void) | null = null;
  private words: SeededRandom;

  constructor(init: {
    id: string;
    promptTokens: readonly string[];
    maxTokens: number;
    targetOutputTokens: number;
    lora: string | null;
    arrivalMs: number;
    readyAtMs: number;
    wordSeed: number;
  }) {
    super();
    this.id = init.id;
    this.tokens = [...init.promptTokens];
    this.promptLength = init.promptTokens.length;
    this.maxTokens = init.maxTokens;
    this.targetOutputTokens = init.targetOutputTokens;
    this.lora = init.lora;
    this.arrivalMs = init.arrivalMs;
    this.readyAtMs = init.readyAtMs;
    this.words = new SeededRandom(init.wordSeed);
  }

  get outputTokens(): number {
    return this.tokens.length - this.promptLength;
  }

  /** A decode step needs exactly the newest sampled token computed. */
  get isDecoding(): boolean {
    return this.outputTokens > 0 && this.tokens.length - this.numComputed === 1;
  }

  /** Deterministic per prompt (temperature-0 style): identical prompts produce identical text. */
  nextWord(): string {
    return `tok${this.words.int(1000)}`;
  }

  /**
   * An independent copy of this request's state (tokens, progress, its blocks as `blockOf` maps
   * them, the rest of its word sequence), without listeners or an owner.
   */
  copy(blockOf: (block: KvBlock) => KvBlock): SimRequest {
    const c = new SimRequest({
      id: this.id, promptTokens: this.tokens.slice(0, this.promptLength), maxTokens: this.maxTokens,
      targetOutputTokens: this.targetOutputTokens, lora: this.lora, arrivalMs: this.arrivalMs, readyAtMs: this.readyAtMs, wordSeed: 0,
    });
    for (let i = this.promptLength; i < this.tokens.length; i++) c.tokens.push(this.tokens[i]);
    c.blockHashes.push(...this.blockHashes);
    c.blocks = this.blocks.map(blockOf);
    c.words = this.words.clone();
    c.status = this.status;
    c.numComputed = this.numComputed;
    c.numRegisteredBlocks = this.numRegisteredBlocks;
    c.cachedTokens = this.cachedTokens;
    c.firstTokenMs = this.firstTokenMs;
    c.lastTokenMs = this.lastTokenMs;
    c.preemptions = this.preemptions;
    return c;
  }

  abort(): void {
    if (this.status === "finished") return;
    if (this.onAbort) this.onAbort(this);
  }
}
