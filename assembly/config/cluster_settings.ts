// lb_type: cluster policies (cluster_metrics, cluster_hash). Not implemented here: the request
// keeps the route's own load balancing, with one warning at configuration time. Their keys are
// checked as Higress checks them, so a configuration Higress refuses is refused here too
// (cluster_metrics/lb_policy.go 119-210, cluster_hash/lb_policy.go 31-76 at higress 8e4041c9).
import { JsonValue } from "../json/value";
import { ConfigReader } from "./reader";
import { checkKeys, HIGRESS_CLUSTER_HASH_KEYS, HIGRESS_CLUSTER_METRICS_KEYS } from "./higress_keys";

export const POLICY_CLUSTER_METRICS = "cluster_metrics";
export const POLICY_CLUSTER_HASH = "cluster_hash";

export function isClusterPolicy(policy: string): bool {
  return policy == POLICY_CLUSTER_METRICS || policy == POLICY_CLUSTER_HASH;
}

export function checkClusterPolicy(r: ConfigReader, policy: string, policyKey: string): void {
  if (policy == POLICY_CLUSTER_METRICS) {
    checkKeys(r, HIGRESS_CLUSTER_METRICS_KEYS, [], "");
    if (r.strList("service_list").length == 0) r.errors.add(r.key("service_list") + " must be a non-empty list of cluster names");
    r.num("ewma_beta", 0.5, 0.0, 1.0);
    const ttft = r.num("ttft_weight", 0.7, 0.0, 1e9);
    const total = r.num("total_latency_weight", 0.3, 0.0, 1e9);
    if (ttft == 0 && total == 0) r.errors.add(r.key("ttft_weight") + " must be > 0 when total_latency_weight is 0, got 0");
    r.num("error_penalty", 3.0, 0.0, 1e9);
    r.int("failure_cooldown_ms", 30000, 0, 86400000);
    r.int("global_inflight_timeout", 3000, 0, 60000);
    r.int("global_inflight_key_ttl", 1800, 0, 31536000);
    if (r.has("global_inflight_enabled") && r.bool("global_inflight_enabled", false)) {
      if (r.str("serviceFQDN", "").length == 0 || r.int("servicePort", 0, 0, 65535) == 0) {
        r.errors.add(r.key("serviceFQDN") + " and servicePort are required when global_inflight_enabled is true");
      }
    }
  } else {
    checkKeys(r, HIGRESS_CLUSTER_HASH_KEYS, [], "");
    checkClusters(r);
  }
  r.errors.warn(policyKey + " " + policy + " is accepted but not implemented here: requests keep the route's own load balancing");
}

/** cluster_hash `clusters`: {cluster, weight > 0}, weights summing to exactly 100. */
function checkClusters(r: ConfigReader): void {
  const o = r.obj;
  const v: JsonValue | null = o === null ? null : o.get("clusters");
  const items: JsonValue[] = v !== null && v.isArray() ? v.arr() : [];
  if (items.length == 0) {
    r.errors.add(r.key("clusters") + " must be a non-empty list of {cluster, weight}");
    return;
  }
  let sum: i64 = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const path = r.key("clusters") + "[" + i.toString() + "]";
    if (!item.isObject()) { r.errors.add(path + " must be an object {cluster, weight}"); continue; }
    const c = new ConfigReader(item, path, r.errors);
    c.rejectUnknown(["cluster", "weight"]);
    if (c.str("cluster", "").length == 0) r.errors.add(c.key("cluster") + " must be a non-empty string");
    if (!c.has("weight")) r.errors.add(c.key("weight") + " is required (an integer in [1, 100])");
    sum += c.int("weight", 0, 1, 100);
  }
  if (r.errors.ok && sum != 100) r.errors.add(r.key("clusters") + " weights must sum to 100, got " + sum.toString());
}
