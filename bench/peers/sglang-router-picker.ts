// SGLang's router (sgl-router / sgl-model-gateway, `--policy cache_aware`, the default) as a
// central picker, with the defaults its command line gives (launch_router: cache threshold 0.3,
// balance abs 64, balance rel 1.5, max tree size 2^26 characters). Per request:
//   loads = the router's own in-flight requests per worker (+1 at the pick, -1 at the end);
//   imbalanced when max - min > 64 AND max > 1.5 x min -> the least-loaded worker;
//   else the match rate of the request's text against the approximate tree (the texts it routed
//   to each worker) > 0.3 -> the worker holding the longest match; else the worker with the
//   smallest tree; the text then joins the chosen worker's tree (in both modes).
// Approximations (the router's tree is a character radix tree; a chained hash per block of
// BLOCK_WORDS words holds the same prefix relation for a fraction of the memory on the 15k-token
// Mooncake prompts): a match counts whole blocks of words, so a prompt shorter than one block
// never matches; the longest-match worker among several is the one that matched it last; the LRU
// trim runs when a tree grows past its bound, not on a 120 s timer.
// Failure behaviour: never throws; a body without text routes with an empty text (no match).
import { extendBlockHashes } from "../../host-test/sim/kv.js";
import { tokenize } from "../../host-test/sim/tokenizer.js";
import type { Pick, Picker } from "../picker-proxy.js";

export const SGLANG_DEFAULTS = { cacheThreshold: 0.3, balanceAbs: 64, balanceRel: 1.5, maxTreeChars: 2 ** 26 };
/** Words per tree entry (the simulator's KV block: a block of words is ~16 tokens). */
const BLOCK_WORDS = 16;
/** Characters per word as the bound counts them (the simulator's words average ~6 with the blank). */
const CHARS_PER_WORD = 6;

/** The text SGLang's router matches: a completion's prompt, or a chat's message contents joined by a blank. */
export function routingText(body: unknown): string {
  if (typeof body !== "object" || body === null) return "";
  const b = body as { messages?: unknown; prompt?: unknown };
  if (typeof b.prompt === "string") return b.prompt;
  if (Array.isArray(b.prompt)) return b.prompt.filter((p) => typeof p === "string").join(" ");
  if (!Array.isArray(b.messages)) return "";
  const parts: string[] = [];
  for (const m of b.messages as Array<{ content?: unknown }>) {
    const c = m?.content;
    if (typeof c === "string") { if (c.length > 0) parts.push(c); continue; }
    if (!Array.isArray(c)) continue;
    for (const p of c as Array<{ type?: unknown; text?: unknown }>) if (p?.type === "text" && typeof p.text === "string") parts.push(p.text);
  }
  return parts.join(" ");
}

interface Ticket { worker: number; ended: boolean }

export class SglangRouterPicker implements Picker {
  private readonly loads: number[];
  /** Per worker: block hash -> last use (insertion order is LRU order: a use re-inserts). */
  private readonly trees: Array<Map<number, number>>;
  private uses = 0;
  private readonly maxBlocks: number;

  constructor(workers: number, private readonly cfg = SGLANG_DEFAULTS) {
    this.loads = new Array<number>(workers).fill(0);
    this.trees = Array.from({ length: workers }, () => new Map<number, number>());
    this.maxBlocks = Math.max(1, Math.floor(cfg.maxTreeChars / (BLOCK_WORDS * CHARS_PER_WORD)));
  }

  pick(body: unknown): Pick {
    const words = tokenize(routingText(body));
    const hashes = extendBlockHashes([], words, BLOCK_WORDS, 0);
    const worker = this.choose(words.length, hashes);
    this.insert(worker, hashes);
    this.loads[worker]++;
    const ticket: Ticket = { worker, ended: false };
    return { pod: worker, ticket, debug: `sglang:load=${this.loads[worker]}` };
  }

  onEnd(pick: Pick): void {
    const t = pick.ticket as Ticket;
    if (t.ended) return;
    t.ended = true;
    this.loads[t.worker]--;
  }

  private choose(words: number, hashes: number[]): number {
    let min = 0;
    let max = 0;
    for (let i = 1; i < this.loads.length; i++) {
      if (this.loads[i] < this.loads[min]) min = i;
      if (this.loads[i] > this.loads[max]) max = i;
    }
    const lo = this.loads[min];
    const hi = this.loads[max];
    if (hi - lo > this.cfg.balanceAbs && hi > lo * this.cfg.balanceRel) return min;
    let best = -1;
    let bestBlocks = 0;
    let bestUse = -1;
    for (let w = 0; w < this.trees.length; w++) {
      const tree = this.trees[w];
      let n = 0;
      while (n < hashes.length && tree.has(hashes[n])) n++;
      const use = n > 0 ? tree.get(hashes[n - 1])! : -1;
      if (n > bestBlocks || (n === bestBlocks && n > 0 && use > bestUse)) { best = w; bestBlocks = n; bestUse = use; }
    }
    if (best >= 0 && words > 0 && (bestBlocks * BLOCK_WORDS) / words > this.cfg.cacheThreshold) return best;
    let smallest = 0;
    for (let w = 1; w < this.trees.length; w++) if (this.trees[w].size < this.trees[smallest].size) smallest = w;
    return smallest;
  }

  private insert(worker: number, hashes: number[]): void {
    const tree = this.trees[worker];
    const use = ++this.uses;
    for (const h of hashes) { tree.delete(h); tree.set(h, use); }
    if (tree.size <= this.maxBlocks) return;
    for (const h of tree.keys()) {
      tree.delete(h);
      if (tree.size <= this.maxBlocks) break;
    }
  }
}
