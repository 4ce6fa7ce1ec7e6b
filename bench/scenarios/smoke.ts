// smoke: a tiny end-to-end run for CI (< 1 minute): 3 tiny pods, one in-process gateway, a short
// multi-turn shared-prefix workload at concurrency 6, compared across round robin, our
// prefix_cache and the omniscient reference. Proves every part starts, streams and is measured.
import { sharedPrefixWorkload } from "../workloads/shared-prefix.js";
import type { LoadScenario } from "./types.js";

export const smoke: LoadScenario = {
  kind: "load",
  name: "smoke",
  description: "CI smoke: 3 tiny pods, 1 gateway, 6 groups x 3 sessions x 3 turns, concurrency 6.",
  topology: { pods: 3, profile: "tiny", timeScale: 1, gateways: 1 },
  workload: (seed) => sharedPrefixWorkload("smoke", {
    num_groups: 6,
    num_prompts_per_group: 3,
    system_prompt_len: 160,
    question_len: 16,
    output_len: 12,
    enable_multi_turn_chat: true,
    turns_per_session: 3,
  }, seed),
  load: { mode: "concurrency", concurrency: 6 },
  policies: ["round_robin", "prefix_cache", "omniscient"],
  slo: { ttftMs: 200 },
  maxWallMs: 15_000,
  parameters: { groups: 6, sessionsPerGroup: 3, turns: 3, systemTokens: 160 },
};
