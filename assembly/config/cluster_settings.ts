// lb_type: cluster policies (cluster_metrics, cluster_hash): their names, and the keys their
// lb_config may hold (Higress's, plus our debugHeader / enableDetailLog, and cluster_metrics's
// pickDeadlineMs). The values are read and validated by cluster_metrics_settings.ts and
// cluster_hash_settings.ts (Higress's own refusals included: cluster_metrics/lb_policy.go 119-210,
// cluster_hash/lb_policy.go 31-76 at higress 8e4041c9).
import { ConfigReader } from "./reader";
import { checkKeys, HIGRESS_ALL_KEYS, HIGRESS_CLUSTER_HASH_KEYS, HIGRESS_CLUSTER_METRICS_KEYS } from "./higress_keys";

export const POLICY_CLUSTER_METRICS = "cluster_metrics";
export const POLICY_CLUSTER_HASH = "cluster_hash";

/** Ours on top of Higress's keys: the debug response header and one log line per pick. */
export const CLUSTER_DEBUG_KEYS: string[] = ["debugHeader", "enableDetailLog"];

export function isClusterPolicy(policy: string): bool {
  return policy == POLICY_CLUSTER_METRICS || policy == POLICY_CLUSTER_HASH;
}

/** Ours for cluster_metrics: how long a pick waits for its Redis reply (global_inflight_enabled). */
export const CLUSTER_METRICS_OWN_KEYS: string[] = ["pickDeadlineMs"];

/** Refuses keys no Higress policy and not this plugin knows; keys of another Higress policy are
 *  accepted and named in one warning, as under the endpoint policies (Higress ignores them). */
export function checkClusterKeys(r: ConfigReader, policy: string): void {
  const keys = policy == POLICY_CLUSTER_METRICS ? HIGRESS_CLUSTER_METRICS_KEYS.concat(CLUSTER_METRICS_OWN_KEYS) : HIGRESS_CLUSTER_HASH_KEYS;
  checkKeys(r, keys.concat(CLUSTER_DEBUG_KEYS), HIGRESS_ALL_KEYS, "not used by lb_policy " + policy);
}
