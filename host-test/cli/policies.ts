// The plugin configurations `npm start` runs, one per --policy: the Redis service of the local
// stack, the x-llmlb-debug response header, and what each policy needs on a small local fleet.
// The demo uses the same configurations (with the detail log on, to show the picks live).
import { redisLbConfig } from "../local-stack.js";

export const START_POLICIES = {
  prefix_cache: {},
  global_least_request: { maxRequestCount: 256 },
  endpoint_metrics: { metricsSource: "health_check" },
} as const satisfies Record<string, Record<string, unknown>>;

export type StartPolicy = keyof typeof START_POLICIES;

export function isStartPolicy(name: string): name is StartPolicy {
  return Object.hasOwn(START_POLICIES, name);
}

export function startPluginConfig(policy: StartPolicy, redisPort: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { lb_policy: policy, lb_config: { ...redisLbConfig(redisPort), debugHeader: "x-llmlb-debug", ...START_POLICIES[policy], ...extra } };
}

/** What the policy does, in one sentence (the demo's footer). */
export const POLICY_STORY: Record<StartPolicy, string> = {
  prefix_cache:
    "prefix_cache sends a request to the pod that already holds the KV cache of its longest known prefix (reason=prefix_hit), so the shared system prompts are not recomputed, and leaves that pod for the least-loaded one when it is overloaded (the load gate).",
  global_least_request:
    "global_least_request sends each request to the pod with the fewest in-flight requests counted across every gateway in Redis; it balances queues but does not look at KV caches, so on this load its KV hit rate stays close to round robin's.",
  endpoint_metrics:
    "endpoint_metrics picks from each pod's own /metrics (queue length, KV-cache use), corrected between health checks by the in-flight counts in Redis, so busy or saturated pods are avoided.",
};
