// The shapes of the seed write-ups and of the blog, scaled to simulator tokens (see
// /work/shared/reference/backends-and-workloads.md for the published numbers):
// - Photoroom: uniform ~1 s requests (fixed in/out), nothing shared on purpose.
// - Galileo: a mix of short / medium / long inputs (500 / 1k / 8k tokens, times `scale`), tagged
//   per class so p99 can be compared per class.
// - Higress: GenAI-Perf multi-turn, 200 in / 800 out per round, 60 sessions x 5 rounds (times
//   `scale` for the lengths); follow-ups go out as soon as the reply is in.
// - Blog: 5 system prompts shared by many single-turn requests.
// - Hot prefix: a few groups with Zipf-skewed traffic (prefix-only scoring hot-spots a pod).
// Throws only on invalid counts (scenario definition error).
import { SeededRandom } from "../../host-test/sim/random.js";
import { lowSharingWorkload } from "./low-sharing.js";
import { sharedPrefixWorkload, zipfCounts } from "./shared-prefix.js";
import { shuffle } from "./text.js";
import type { Workload } from "./types.js";

const scaled = (tokens: number, scale: number) => Math.max(1, Math.round(tokens * scale));

export function photoroomWorkload(count: number, seed: number, inputTokens = 128, outputTokens = 100): Workload {
  return lowSharingWorkload("photoroom", { count, input_len: inputTokens, output_len: outputTokens }, seed);
}

/** Class shares of the Galileo mix: mostly short requests, a tail of long ones. */
export const GALILEO_MIX = [
  { tag: "500", tokens: 500, share: 0.45 },
  { tag: "1k", tokens: 1000, share: 0.4 },
  { tag: "8k", tokens: 8000, share: 0.15 },
] as const;

export function galileoWorkload(count: number, seed: number, scale: number, outputTokens: number): Workload {
  const parts = GALILEO_MIX.map((c, i) =>
    lowSharingWorkload(`galileo-${c.tag}`, { count: Math.round(count * c.share), input_len: scaled(c.tokens, scale), output_len: outputTokens }, seed + i, c.tag));
  const sessions = shuffle(parts.flatMap((p) => p.sessions), new SeededRandom(seed ^ 0x5bd1e995));
  return { name: "galileo", sessions, followUps: "queued" };
}

export function higressWorkload(seed: number, sessions = 60, rounds = 5, scale = 1): Workload {
  const w = sharedPrefixWorkload("higress", {
    num_groups: sessions,
    num_prompts_per_group: 1,
    system_prompt_len: 0,
    question_len: scaled(200, scale),
    output_len: scaled(800, scale),
    enable_multi_turn_chat: true,
    turns_per_session: rounds,
    followUps: "immediate",
  }, seed);
  // GenAI-Perf sessions carry no shared system prompt: reuse comes only from each session's history.
  for (const s of w.sessions) s.systemPrompt = null;
  return w;
}

export function blogWorkload(count: number, seed: number, systemTokens = 1024, questionTokens = 64, outputTokens = 64): Workload {
  const groups = 5;
  return sharedPrefixWorkload("blog", {
    num_groups: groups,
    num_prompts_per_group: zipfCounts(groups, count, 0),
    system_prompt_len: systemTokens,
    question_len: questionTokens,
    output_len: outputTokens,
  }, seed);
}

export function hotPrefixWorkload(count: number, seed: number, groups = 4, skew = 1.5, systemTokens = 1024): Workload {
  return sharedPrefixWorkload("hot-prefix", {
    num_groups: groups,
    num_prompts_per_group: zipfCounts(groups, count, skew),
    system_prompt_len: systemTokens,
    question_len: { mean: 64, std_dev: 16, min: 16, max: 128 },
    output_len: { mean: 64, std_dev: 16, min: 16, max: 128 },
  }, seed);
}
