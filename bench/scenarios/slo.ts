// predicted_latency and gateway-side queueing benchmarks (bench/slo/): custom scenarios.
import { burstMain } from "../slo/burst.js";
import { heteroMain } from "../slo/hetero.js";
import type { CustomScenario } from "./types.js";

export const sloHetero: CustomScenario = {
  kind: "custom", name: "slo-hetero",
  description: "SLO routing on a fleet with half the pods 2x slower, mixed prompt/output shapes and per-request SLOs (predicted_latency vs endpoint_metrics vs prefix_cache).",
  run: heteroMain,
};

export const sloBurst: CustomScenario = {
  kind: "custom", name: "slo-burst",
  description: "2x overload burst with two tenants: gateway-side queueing vs shedding (failed, wait p99, fairness).",
  run: burstMain,
};
