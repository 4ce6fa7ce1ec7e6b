// The policies by lb_policy name (the names and their config keys live in config/lb_config.ts).
// Adding a policy: its file (or folder) under policy/, its keys in config/, and one line here.
import { LbConfig, POLICY_GLOBAL_LEAST_REQUEST, POLICY_HEADER, POLICY_PREFIX_CACHE, POLICY_ENDPOINT_METRICS,
  POLICY_CLUSTER_METRICS, POLICY_CLUSTER_HASH, POLICY_ENDPOINT_HASH, POLICY_PREDICTED_LATENCY } from "../config/lb_config";
import { Services } from "../services/services";
import { Policy } from "./policy";
import { LeastRequestPolicy } from "./least_request";
import { HeaderPolicy } from "./header";
import { PrefixCachePolicy } from "./prefix_cache";
import { EndpointMetricsPolicy } from "./endpoint_metrics/policy";
import { PredictedLatencyPolicy } from "./predicted_latency/policy";
import { ClusterMetricsPolicy } from "./cluster_metrics/policy";
import { ClusterHashPolicy } from "./cluster_hash/policy";
import { EndpointHashPolicy } from "./endpoint_hash/policy";

type PolicyFactory = (cfg: LbConfig, services: Services) => Policy;

class Registered {
  constructor(public name: string, public make: PolicyFactory) {}
}

const REGISTRY: Registered[] = [
  new Registered(POLICY_GLOBAL_LEAST_REQUEST, (c: LbConfig, sv: Services): Policy => new LeastRequestPolicy(c, sv)),
  new Registered(POLICY_HEADER, (c: LbConfig, sv: Services): Policy => new HeaderPolicy(c, sv)),
  new Registered(POLICY_PREFIX_CACHE, (c: LbConfig, sv: Services): Policy => new PrefixCachePolicy(c, sv)),
  new Registered(POLICY_ENDPOINT_METRICS, (c: LbConfig, sv: Services): Policy => new EndpointMetricsPolicy(c, sv)),
  new Registered(POLICY_PREDICTED_LATENCY, (c: LbConfig, sv: Services): Policy => new PredictedLatencyPolicy(c, sv)),
  new Registered(POLICY_CLUSTER_METRICS, (c: LbConfig, sv: Services): Policy => new ClusterMetricsPolicy(c, sv)),
  new Registered(POLICY_CLUSTER_HASH, (c: LbConfig, sv: Services): Policy => new ClusterHashPolicy(c, sv)),
  new Registered(POLICY_ENDPOINT_HASH, (c: LbConfig, sv: Services): Policy => new EndpointHashPolicy(c, sv)),
];

/** The policy of a rule, or null when its lb_policy has no implementation here (no override). */
export function makePolicy(cfg: LbConfig, services: Services): Policy | null {
  for (let i = 0; i < REGISTRY.length; i++) {
    if (REGISTRY[i].name == cfg.policy) return REGISTRY[i].make(cfg, services);
  }
  return null;
}
