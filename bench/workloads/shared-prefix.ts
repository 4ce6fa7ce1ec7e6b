// inference-perf's `shared_prefix` data generator: `num_groups` groups, each with one system
// prompt of `system_prompt_len` tokens shared by its `num_prompts_per_group` prompts (a number,
// or one count per group for skewed traffic), each prompt adding a `question_len` question and
// asking for `output_len` tokens. With `enable_multi_turn_chat` every prompt is a user session
// of `turns_per_session` rounds whose context grows (previous prompt + reply + new question).
// Sessions are shuffled with the seed. Throws on invalid parameters (scenario definition error).
import { SeededRandom } from "../../host-test/sim/random.js";
import { sampleLength, type LengthSpec } from "./lengths.js";
import { randomWords, shuffle } from "./text.js";
import type { Session, Workload } from "./types.js";

export interface SharedPrefixParams {
  num_groups: number;
  num_prompts_per_group: number | number[];
  system_prompt_len: LengthSpec;
  question_len: LengthSpec;
  output_len: LengthSpec;
  enable_multi_turn_chat?: boolean;
  /** Rounds per session when multi-turn (default 1). */
  turns_per_session?: number;
  followUps?: Workload["followUps"];
}

function promptsInGroup(params: SharedPrefixParams, group: number): number {
  const n = params.num_prompts_per_group;
  return Array.isArray(n) ? n[group] ?? 0 : n;
}

export function validateSharedPrefix(params: SharedPrefixParams): string | null {
  if (!(Number.isInteger(params.num_groups) && params.num_groups >= 1)) return `num_groups must be an integer >= 1, got ${params.num_groups}`;
  const counts = params.num_prompts_per_group;
  if (Array.isArray(counts) && counts.length !== params.num_groups) {
    return `num_prompts_per_group has ${counts.length} entries for ${params.num_groups} groups`;
  }
  for (const c of Array.isArray(counts) ? counts : [counts]) {
    if (!(Number.isInteger(c) && c >= 0)) return `num_prompts_per_group must be integers >= 0, got ${c}`;
  }
  const turns = params.turns_per_session ?? 1;
  if (!(Number.isInteger(turns) && turns >= 1)) return `turns_per_session must be an integer >= 1, got ${turns}`;
  return null;
}

export function sharedPrefixWorkload(name: string, params: SharedPrefixParams, seed: number): Workload {
  const problem = validateSharedPrefix(params);
  if (problem) throw new Error(`${name}: ${problem}`);
  const rng = new SeededRandom(seed);
  const turns = params.enable_multi_turn_chat ? params.turns_per_session ?? 1 : 1;
  const sessions: Session[] = [];
  for (let group = 0; group < params.num_groups; group++) {
    const systemPrompt = randomWords(rng, sampleLength(params.system_prompt_len, rng));
    for (let p = 0; p < promptsInGroup(params, group); p++) {
      sessions.push({
        id: `g${group}-p${p}`,
        group,
        systemPrompt,
        turns: Array.from({ length: turns }, () => ({
          question: randomWords(rng, sampleLength(params.question_len, rng)),
          outputTokens: sampleLength(params.output_len, rng),
        })),
      });
    }
  }
  return { name, sessions: shuffle(sessions, rng), followUps: params.followUps ?? "queued" };
}

/** Zipf-like prompt counts: group g gets a share proportional to 1 / (g + 1)^skew, summing to total. */
export function zipfCounts(groups: number, total: number, skew: number): number[] {
  const weights = Array.from({ length: groups }, (_, g) => 1 / Math.pow(g + 1, skew));
  const sum = weights.reduce((a, b) => a + b, 0);
  const counts = weights.map((w) => Math.floor((w / sum) * total));
  // Hand the rounding remainder to the hottest groups so the total is exact.
  for (let g = 0, left = total - counts.reduce((a, b) => a + b, 0); left > 0; g = (g + 1) % groups, left--) counts[g]++;
  return counts;
}
