// inference-perf shaped scenarios, scaled to 4 simulated Qwen3-32B pods with small KV pools
// (so the prompt sets press on the cache as the published ones press on real GPUs):
// - shared-prefix: the small variant (50 groups x 5, system 2048, question 256, output 256,
//   rates 1 -> 16) at lengths x 0.25 and 16 groups, Poisson stages 2 -> 16 req/s.
// - multi-turn: 6 groups of users, system 1000, question N(30, 9), output N(1000, 300) at output
//   x 0.1, 4 turns per user, follow-ups queued behind other users (inference-perf's round robin).
// - low-sharing: ShareGPT-like log-normal in ~160 / out ~340 at x 0.5: prefix routing must not regress.
// - hot-prefix: 4 groups with Zipf(1.5) traffic: pure affinity hot-spots the hottest group's pod.
import { sharedPrefixWorkload } from "../workloads/shared-prefix.js";
import { lowSharingWorkload } from "../workloads/low-sharing.js";
import { hotPrefixWorkload } from "../workloads/seeds.js";
import { repeatWorkload } from "../workloads/repeat.js";
import type { LoadScenario } from "./types.js";
import type { PolicyName } from "../policies.js";

export const ALL_POLICIES: PolicyName[] = [
  "round_robin", "random", "least_request", "prefix_affinity", "global_least_request", "prefix_cache", "endpoint_metrics", "omniscient",
];

/**
 * 4 Qwen3-32B/2xH100 pods (prefill ~20k tok/s, so cache misses cost TTFT) with 6k-token KV pools
 * (384 blocks) and 32-seat batches: one pod cannot hold every group's prefix, the fleet can.
 */
const FOUR_SMALL_PODS = { pods: 4, profile: "qwen3-32b-2xh100", profileOverrides: { numGpuBlocks: 384, maxNumSeqs: 32 }, timeScale: 2, gateways: 1 };

export const sharedPrefix: LoadScenario = {
  kind: "load",
  name: "shared-prefix",
  description: "inference-perf shared_prefix (small variant, lengths x 0.25): 16 groups x 5, system 512, question 64, output 64, Poisson 2 -> 16 req/s.",
  topology: FOUR_SMALL_PODS,
  workload: (seed) => repeatWorkload(sharedPrefixWorkload("shared-prefix", {
    num_groups: 16, num_prompts_per_group: 5, system_prompt_len: 512, question_len: 64, output_len: 64,
  }, seed), 4, seed),
  load: { mode: "stages", arrivals: "poisson", stages: [2, 4, 8, 16].map((rate) => ({ rate, durationMs: 10_000 })) },
  policies: ALL_POLICIES,
  slo: { ttftMs: 500, tpotMs: 50 },
  maxWallMs: 60_000,
  parameters: { groups: 16, promptsPerGroup: 5, systemTokens: 512, questionTokens: 64, outputTokens: 64, published: "50 x 5, 2048 / 256 / 256, rates 1-16 (Qwen3-0.6B)" },
};

export const multiTurn: LoadScenario = {
  kind: "load",
  name: "multi-turn",
  description: "inference-perf multi-turn chat: 6 groups x 20 users x 4 turns, system 500, question N(30, 9), output N(100, 30), Poisson 8 req/s.",
  topology: FOUR_SMALL_PODS,
  workload: (seed) => sharedPrefixWorkload("multi-turn", {
    num_groups: 6,
    num_prompts_per_group: 20,
    system_prompt_len: 500,
    question_len: { mean: 30, std_dev: 9, min: 5, max: 60 },
    output_len: { mean: 100, std_dev: 30, min: 10, max: 200 },
    enable_multi_turn_chat: true,
    turns_per_session: 4,
    followUps: "queued",
  }, seed),
  load: { mode: "stages", arrivals: "poisson", stages: [{ rate: 8, durationMs: 45_000 }] },
  policies: ALL_POLICIES,
  slo: { ttftMs: 500, tpotMs: 50 },
  maxWallMs: 60_000,
  parameters: { groups: 6, usersPerGroup: 20, turns: 4, published: "6 x 1000 users, system 1000, question N(30,9), output N(1000,300)" },
};

export const lowSharing: LoadScenario = {
  kind: "load",
  name: "low-sharing",
  description: "Low-sharing control (ShareGPT-like, lengths x 0.5): log-normal in ~80 / out ~170, Poisson 15 req/s.",
  topology: FOUR_SMALL_PODS,
  workload: (seed) => lowSharingWorkload("low-sharing", {
    count: 600,
    input_len: { log_normal_mean: 80, sigma: 0.8, min: 4, max: 512 },
    output_len: { log_normal_mean: 170, sigma: 0.7, min: 4, max: 512 },
  }, seed),
  load: { mode: "stages", arrivals: "poisson", stages: [{ rate: 15, durationMs: 30_000 }] },
  policies: ALL_POLICIES,
  slo: { ttftMs: 500, tpotMs: 50 },
  maxWallMs: 60_000,
  parameters: { published: "ShareGPT-like input ~160 / output ~340 log-normal" },
};

export const hotPrefix: LoadScenario = {
  kind: "load",
  name: "hot-prefix",
  description: "Hot prefix skew: 4 groups, Zipf(1.5) traffic, system 1024, Poisson 20 req/s: prefix-only routing hot-spots a pod.",
  topology: FOUR_SMALL_PODS,
  workload: (seed) => hotPrefixWorkload(500, seed),
  load: { mode: "stages", arrivals: "poisson", stages: [{ rate: 20, durationMs: 20_000 }] },
  policies: ["round_robin", "least_request", "prefix_affinity", "prefix_cache", "endpoint_metrics", "omniscient"],
  slo: { ttftMs: 500, tpotMs: 50 },
  maxWallMs: 60_000,
  parameters: { groups: 4, skew: 1.5, systemTokens: 1024, published: "llm-d: prefix-only fell to ~55% success, prefix + load kept 100%" },
};
