// llm-d / GIE "many system prompts" at 73% of cluster KV, scaled: 8 Qwen3-32B/2xH100 pods with
// 8k-token KV pools (512 blocks), lengths x 0.1 (system 600, question 120, output 100), the group
// count solved so distinct prompts fill ~73% of the cluster's KV (~6x one pod), the prompt set
// revisited 6 times, Poisson stages 4 -> 32 req/s (the published sweep is 3 -> 60 QPS). Measured:
// random routing queues in the last stages (TTFT p90 1.6 s, p99 4.3 s simulated), ~35 s wall per policy.
import { manySystemPromptsShape, manySystemPromptsWorkload } from "../workloads/many-system-prompts.js";
import { repeatWorkload } from "../workloads/repeat.js";
import { ALL_POLICIES } from "./inference-perf.js";
import type { LoadScenario } from "./types.js";

const PODS = 8;
const BLOCKS = 512;
const BLOCK_SIZE = 16;
const shapeParams = { pods: PODS, podKvTokens: BLOCKS * BLOCK_SIZE, capacityFraction: 0.73, lengthScale: 0.1 };

export const llmd73: LoadScenario = {
  kind: "load",
  name: "llmd-73",
  description: "llm-d many system prompts at 73% of cluster KV (scaled): 8 pods, system 600 / question 120 / output 100, Poisson 4 -> 32 req/s.",
  topology: { pods: PODS, profile: "qwen3-32b-2xh100", profileOverrides: { numGpuBlocks: BLOCKS, maxNumSeqs: 64 }, timeScale: 2, gateways: 1 },
  workload: (seed) => repeatWorkload(manySystemPromptsWorkload(shapeParams, seed).workload, 6, seed),
  load: { mode: "stages", arrivals: "poisson", stages: [4, 8, 16, 24, 32].map((rate) => ({ rate, durationMs: 12_000 })) },
  policies: ALL_POLICIES,
  slo: { ttftMs: 1000, tpotMs: 100 },
  maxWallMs: 90_000,
  parameters: {
    shape: manySystemPromptsShape(shapeParams),
    published: "150 groups x 5, 6000 / 1200 / 1000 tokens, 8 x Qwen3-32B on 2xH100, 3 -> 60 QPS; TTFT p90 0.54 s precise vs 92.6 s random",
  },
};

// The same shape at FULL scale for capacity at SLO (`--capacity`): 8 Qwen3-32B/2xH100 pods with
// their real pools (19,208 blocks = 307k tokens), 150 groups x 5, system 6000 / question 1200 /
// output 1000 tokens (the published lengths), each rate a fresh run of Poisson arrivals. llm-d's
// table: random 4,429 / approximate prefix 6,944 / precise prefix 8,730 output tok/s.
const FULL_BLOCKS = 19_208;
const fullShape = { pods: PODS, podKvTokens: FULL_BLOCKS * BLOCK_SIZE, capacityFraction: 0.73, lengthScale: 1 };

export const llmdCapacity: LoadScenario = {
  kind: "load",
  name: "llmd-capacity",
  description: "llm-d many system prompts at full scale (8 pods x 307k KV tokens, 150 groups x 5, 6000 / 1200 / 1000 tokens): capacity at SLO with --capacity.",
  topology: { pods: PODS, profile: "qwen3-32b-2xh100", timeScale: 1, gateways: 1 },
  workload: (seed) => repeatWorkload(manySystemPromptsWorkload(fullShape, seed).workload, 8, seed),
  load: { mode: "stages", arrivals: "poisson", stages: [3, 6, 9, 12, 15].map((rate) => ({ rate, durationMs: 60_000 })) },
  policies: ["random", "global_least_request", "prefix_cache", "omniscient"],
  slo: { ttftMs: 2000, tpotMs: 100 },
  capacity: { rates: [4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 60], durationMs: 60_000, drainMs: 120_000, slo: { ttftP90Ms: 2000, tpotP90Ms: 100 }, bisectSteps: 3 },
  maxWallMs: 600_000,
  parameters: { shape: manySystemPromptsShape(fullShape), published: "llm-d: random 4,429 / approximate prefix 6,944 / precise prefix 8,730 output tok/s; TTFT p90 92.6 s / 31.1 s / 0.54 s" },
};
