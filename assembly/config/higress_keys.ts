// Keys Higress's ai-load-balancer reads that this plugin does not use. They are accepted (a
// configuration written for Higress must load) and named in one warning line; any other unknown
// key is still refused. Sources (higress-parity.md): cluster_metrics/lb_policy.go 119-230 and
// cluster_hash/lb_policy.go 31-76 at higress-group/higress 8e4041c9; endpoint_hash/lb_policy.go
// 45-83 of open PR #3967 (2093827b).
import { ConfigReader } from "./reader";

/** cluster_metrics (lb_type: cluster), every key its constructor reads. */
export const HIGRESS_CLUSTER_METRICS_KEYS: string[] = ["mode", "service_list", "cluster_header", "rate_limit",
  "queue_size", "ewma_beta", "p2c_choices", "ttft_weight", "total_latency_weight", "error_penalty",
  "failure_cooldown_ms", "metrics_missing_policy", "global_inflight_enabled", "global_inflight_key_prefix",
  "global_inflight_timeout", "global_inflight_key_ttl", "serviceFQDN", "servicePort", "username", "password",
  "database"];

/** cluster_hash (lb_type: cluster). */
export const HIGRESS_CLUSTER_HASH_KEYS: string[] = ["clusters", "hash_header", "cluster_header"];

/** Keys of Higress policies we do not run, accepted (ignored) inside an endpoint policy's
 *  lb_config, where Higress would ignore them too. endpoint_hash's `hash_header` and
 *  `stickyTimeout` come from open PR #3967. */
export const HIGRESS_FOREIGN_KEYS: string[] = HIGRESS_CLUSTER_METRICS_KEYS.concat(HIGRESS_CLUSTER_HASH_KEYS)
  .concat(["stickyTimeout"]);

/** The endpoint policies' Higress keys: global_least_request and prefix_cache (Redis, counts,
 *  redisKeyTTL), endpoint_metrics (with `engine` of PR #4043 and the window of PR #4260),
 *  endpoint_hash (PR #3967). Accepted (ignored) inside a cluster policy's lb_config. */
export const HIGRESS_ENDPOINT_KEYS: string[] = ["serviceFQDN", "servicePort", "username", "password", "timeout",
  "database", "maxRequestCount", "cleanInterval", "enableDetailLog", "redisKeyTTL", "metric_policy", "target_metric",
  "rate_limit", "engine", "window_size", "window_seconds", "hash_header", "stickyTimeout"];

/** Every key some Higress policy reads (what a cluster policy accepts and ignores when not its own). */
export const HIGRESS_ALL_KEYS: string[] = HIGRESS_ENDPOINT_KEYS.concat(HIGRESS_CLUSTER_METRICS_KEYS).concat(HIGRESS_CLUSTER_HASH_KEYS);

/** Refuses keys nobody knows; names the Higress keys that are accepted but ignored (one warning). */
export function checkKeys(r: ConfigReader, ours: string[], higressOnly: string[], why: string): void {
  r.rejectUnknown(ours.concat(higressOnly));
  const o = r.obj;
  if (o === null) return;
  const keys = o.keys();
  const ignored = new Array<string>();
  for (let i = 0; i < keys.length; i++) {
    if (!ours.includes(keys[i]) && higressOnly.includes(keys[i]) && !ignored.includes(keys[i])) ignored.push(keys[i]);
  }
  for (let i = 0; i < ignored.length; i++) ignored[i] = r.key(ignored[i]);
  if (ignored.length > 0) r.errors.warn(ignored.join(", ") + ": read by Higress, ignored here (" + why + ")");
}
