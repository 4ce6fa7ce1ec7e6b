// The central pickers of the proxy policies (bench/policies.ts), built for one run's fleet: the
// wall path's pods (host-test/sim servers) or a virtual run's (bench/virtual/virtual-fleet.ts).
// Failure behaviour: the SLO oracle forks engines on the virtual clock, so it throws without a
// virtual fleet (the run reports the policy as skipped); slo_oracle_late holds requests, which only
// a virtual run's front can do (createVirtualPicker), so createPicker always throws for it.
import type { SimEngine } from "../host-test/sim/engine.js";
import { OmniscientPicker } from "./omniscient-picker.js";
import { roundRobinPicker, type Picker } from "./picker-proxy.js";
import type { ProxyPolicy } from "./policies.js";
import { DynamoKvPicker } from "./peers/dynamo-kv-picker.js";
import { SglangRouterPicker } from "./peers/sglang-router-picker.js";
import { PrecisePrefixPicker } from "./precise-prefix-picker.js";
import { SloLatePicker } from "./slo/slo-late-picker.js";
import { SloOraclePicker } from "./slo/slo-oracle-picker.js";
import type { VirtualFleet } from "./virtual/virtual-fleet.js";
import type { HoldingPicker } from "./virtual/virtual-picker.js";

export function createPicker(policy: ProxyPolicy, pods: ReadonlyArray<{ readonly engine: SimEngine }>, virtualFleet: VirtualFleet | null): Picker {
  switch (policy.picker) {
    case "omniscient": return new OmniscientPicker(pods);
    case "precise_prefix": return new PrecisePrefixPicker(pods);
    case "round_robin": return roundRobinPicker(pods.length);
    case "sglang_router": return new SglangRouterPicker(pods.length);
    case "dynamo_kv": return new DynamoKvPicker(pods);
    case "slo_oracle":
    case "slo_oracle_protect":
    case "slo_oracle_trade":
    case "slo_oracle_blind":
    case "slo_oracle_late":
    case "slo_oracle_fastest":
    case "slo_oracle_late_fastest":
      if (!virtualFleet || policy.picker === "slo_oracle_late" || policy.picker === "slo_oracle_late_fastest") throw new Error(`${policy.picker}: virtual time only (it forks the engines on the virtual clock)`);
      if (policy.picker === "slo_oracle_blind") return new SloOraclePicker(virtualFleet, "tpot_fit", true);
      if (policy.picker === "slo_oracle_fastest") return new SloOraclePicker(virtualFleet, "fastest");
      return new SloOraclePicker(virtualFleet, policy.picker === "slo_oracle" ? "tpot_fit" : policy.picker === "slo_oracle_protect" ? "protect" : "trade");
  }
}

/** A virtual run's picker: createPicker's, or one that may hold requests (late binding, bench/virtual/virtual-picker.ts). */
export function createVirtualPicker(policy: ProxyPolicy, virtualFleet: VirtualFleet): Picker | HoldingPicker {
  if (policy.picker === "slo_oracle_late") return new SloLatePicker(virtualFleet);
  if (policy.picker === "slo_oracle_late_fastest") return new SloLatePicker(virtualFleet, "fastest");
  return createPicker(policy, virtualFleet.pods, virtualFleet);
}
