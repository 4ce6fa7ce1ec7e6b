// Mooncake-format traces (kvcache-ai/Mooncake FAST'25 release; any file of that format): JSONL,
// one request per line with `timestamp` (ms from the start), `input_length`, `output_length`
// (tokens) and `hash_ids` (ids of 512-token prompt blocks; requests sharing leading ids share that
// much prefix). No text is included, so replay makes it: block id b is the same 512 simulator
// tokens in every request (words drawn from a generator seeded by b and the run's seed), sent as
// one chat message per block, so both the engines' KV prefix cache and the plugin's prefix tree
// (one level per message) see exactly the trace's sharing. Each message renders as
// `<|user|>` + words + `<|end|>` (simulator tokens), so a full block carries 510 words and the
// prompt is exactly input_length tokens plus the generation marker.
// Failure behaviour: parseMooncakeTrace throws naming the line of the first malformed request.
import fs from "node:fs";
import zlib from "node:zlib";
import { SeededRandom } from "../../host-test/sim/random.js";
import { ASSISTANT_MARKER, END_MARKER, type ChatMessage } from "../../host-test/sim/tokenizer.js";
import { randomWords } from "../workloads/text.js";
import type { Session, Workload } from "../workloads/types.js";

export const MOONCAKE_BLOCK_TOKENS = 512;
/** Simulator tokens each chat message adds around its content (`<|user|>`, `<|end|>`). */
const MESSAGE_MARKER_TOKENS = 2;

export interface TraceRequest {
  timestampMs: number;
  inputLength: number;
  outputLength: number;
  hashIds: number[];
}

function nonNegativeInt(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0;
}

/** A trace file's text; a name ending in `.gz` is gunzipped. */
export function readTraceFile(file: string): string {
  const bytes = fs.readFileSync(file);
  return (file.endsWith(".gz") ? zlib.gunzipSync(bytes) : bytes).toString("utf8");
}

export function parseMooncakeTrace(text: string): TraceRequest[] {
  const out: TraceRequest[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line.length === 0) continue;
    const where = `trace line ${i + 1}`;
    let o: Record<string, unknown>;
    try { o = JSON.parse(line) as Record<string, unknown>; } catch { throw new Error(`${where}: not JSON`); }
    if (o === null || typeof o !== "object" || Array.isArray(o)) throw new Error(`${where}: not a JSON object`);
    const { timestamp, input_length: inputLength, output_length: outputLength, hash_ids: hashIds } = o;
    if (typeof timestamp !== "number" || !(timestamp >= 0)) throw new Error(`${where}: timestamp must be a number >= 0 (ms)`);
    if (!nonNegativeInt(inputLength) || inputLength < 1) throw new Error(`${where}: input_length must be an integer >= 1`);
    if (!nonNegativeInt(outputLength) || outputLength < 1) throw new Error(`${where}: output_length must be an integer >= 1`);
    if (!Array.isArray(hashIds) || !hashIds.every(nonNegativeInt)) throw new Error(`${where}: hash_ids must be an array of integers >= 0`);
    const blocks = Math.ceil(inputLength / MOONCAKE_BLOCK_TOKENS);
    if (hashIds.length !== blocks) throw new Error(`${where}: ${hashIds.length} hash_ids for ${inputLength} tokens (expected ${blocks} blocks of ${MOONCAKE_BLOCK_TOKENS})`);
    if (out.length > 0 && timestamp < out[out.length - 1].timestampMs) throw new Error(`${where}: timestamps must not decrease`);
    out.push({ timestampMs: timestamp, inputLength, outputLength, hashIds: hashIds as number[] });
  }
  return out;
}

/** Deterministic text of block ids: the same id gives the same words in every request of a run. */
export class BlockText {
  private readonly cache = new Map<number, { words: string[]; text: string }>();
  constructor(private readonly seed: number) {}

  private block(id: number): { words: string[]; text: string } {
    let b = this.cache.get(id);
    if (!b) {
      const text = randomWords(new SeededRandom((Math.imul(id + 1, 0x9e3779b1) ^ this.seed) >>> 0), MOONCAKE_BLOCK_TOKENS - MESSAGE_MARKER_TOKENS);
      b = { words: text.split(" "), text };
      this.cache.set(id, b);
    }
    return b;
  }

  /** The first `n` words of block `id` (n <= 510), as text. */
  words(id: number, n: number): string {
    const b = this.block(id);
    return n >= b.words.length ? b.text : b.words.slice(0, n).join(" ");
  }

  /** The same words as tokens, appended to `out`. */
  pushTokens(id: number, n: number, out: string[]): void {
    const w = this.block(id).words;
    for (let i = 0; i < n && i < w.length; i++) out.push(w[i]);
  }
}

/** The chat messages of one trace request: one user message per block, input_length tokens in all. */
export function traceMessages(req: TraceRequest, text: BlockText): ChatMessage[] {
  return blockWords(req).map(([id, n]) => ({ role: "user", content: text.words(id, n) }));
}

/** Blocks of a request: [id, words] with input_length tokens in all once the markers are added. */
function blockWords(req: TraceRequest): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let left = req.inputLength;
  for (const id of req.hashIds) {
    const tokens = Math.min(left, MOONCAKE_BLOCK_TOKENS);
    left -= tokens;
    // A block shorter than its markers still gets one word (the prompt grows by at most 2 tokens).
    out.push([id, Math.max(1, tokens - MESSAGE_MARKER_TOKENS)]);
  }
  return out;
}

/**
 * The simulator tokens of traceMessages(req) as the pod renders them (chatToPrompt + tokenize),
 * built directly: tokenizing 15k-token prompts by regex dominated replay time.
 */
export function traceTokens(req: TraceRequest, text: BlockText): string[] {
  const out: string[] = [];
  for (const [id, n] of blockWords(req)) {
    out.push("<|user|>");
    text.pushTokens(id, n, out);
    out.push(END_MARKER);
  }
  out.push(ASSISTANT_MARKER);
  return out;
}

export interface TraceReplay {
  workload: Workload;
  /** Arrival times in simulated ms: timestamps / speed. */
  timesMs: number[];
}

/**
 * The trace as a workload (one single-turn session per request, in trace order) and its arrival
 * times compressed by `speed` (2 = twice as fast). Prompts are built when sent (see Session.build).
 */
export function traceReplay(requests: readonly TraceRequest[], opts: { speed: number; seed: number; maxRequests?: number }): TraceReplay {
  if (!(opts.speed > 0)) throw new Error(`trace speed must be > 0, got ${opts.speed}`);
  const text = new BlockText(opts.seed);
  const chosen = requests.slice(0, opts.maxRequests ?? requests.length);
  const sessions: Session[] = chosen.map((r, i) => ({
    id: `trace-${i}`,
    group: r.hashIds[0] ?? -1,
    systemPrompt: null,
    turns: [{ question: "", outputTokens: r.outputLength }],
    messages: () => traceMessages(r, text),
    promptTokens: () => traceTokens(r, text),
  }));
  const t0 = chosen[0]?.timestampMs ?? 0;
  return {
    workload: { name: "mooncake-trace", sessions, followUps: "queued" },
    timesMs: chosen.map((r) => (r.timestampMs - t0) / opts.speed),
  };
}
