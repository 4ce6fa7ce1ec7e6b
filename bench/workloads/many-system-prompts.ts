// llm-d / GIE "many system prompts", scaled: the published run (150 groups x 5, system 6000,
// question 1200, output 1000 tokens, 8 pods of 307k KV tokens) has prompts (system + the group's
// questions) filling ~73% of the cluster's KV, ~6x one pod's. Here lengths keep the 6000 : 1200 :
// 1000 ratio times `lengthScale`, and the group count is solved so the same capacity fraction holds
// for the simulated pods. Throws on a fleet too small for one group (scenario definition error).
import { sharedPrefixWorkload } from "./shared-prefix.js";
import type { Workload } from "./types.js";

export interface ManySystemPromptsParams {
  pods: number;
  /** KV capacity of one pod in tokens (numGpuBlocks x blockSize). */
  podKvTokens: number;
  /** Fraction of the cluster's KV the distinct prompt tokens need (0.73 published). */
  capacityFraction?: number;
  lengthScale?: number;
  promptsPerGroup?: number;
}

export interface ManySystemPromptsShape {
  groups: number;
  systemTokens: number;
  questionTokens: number;
  outputTokens: number;
  /** Distinct prompt tokens / cluster KV tokens (close to capacityFraction). */
  clusterKvFraction: number;
  /** Distinct prompt tokens / one pod's KV tokens. */
  podKvMultiple: number;
}

export function manySystemPromptsShape(p: ManySystemPromptsParams): ManySystemPromptsShape {
  const scale = p.lengthScale ?? 0.1;
  const perGroup = p.promptsPerGroup ?? 5;
  const systemTokens = Math.round(6000 * scale);
  const questionTokens = Math.round(1200 * scale);
  const outputTokens = Math.round(1000 * scale);
  const groupTokens = systemTokens + perGroup * questionTokens;
  const clusterTokens = p.pods * p.podKvTokens;
  const groups = Math.round(((p.capacityFraction ?? 0.73) * clusterTokens) / groupTokens);
  if (groups < 1) throw new Error(`many-system-prompts: ${p.pods} pods x ${p.podKvTokens} KV tokens cannot hold one group of ${groupTokens} tokens`);
  return {
    groups,
    systemTokens,
    questionTokens,
    outputTokens,
    clusterKvFraction: (groups * groupTokens) / clusterTokens,
    podKvMultiple: (groups * groupTokens) / p.podKvTokens,
  };
}

export function manySystemPromptsWorkload(p: ManySystemPromptsParams, seed: number): { workload: Workload; shape: ManySystemPromptsShape } {
  const shape = manySystemPromptsShape(p);
  const workload = sharedPrefixWorkload("many-system-prompts", {
    num_groups: shape.groups,
    num_prompts_per_group: p.promptsPerGroup ?? 5,
    system_prompt_len: shape.systemTokens,
    question_len: shape.questionTokens,
    output_len: shape.outputTokens,
  }, seed);
  return { workload, shape };
}
