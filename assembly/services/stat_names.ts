// How the plugin's stats are named: labels written into the name the way proxy-wasm SDKs do it,
// `tag=.=value;.;` before the metric name (proxy-wasm-cpp-sdk proxy_wasm_api.h
// MetricBase::prefixWithFields, with Istio's separators "=.=" and ";.;"). Envoy cuts each such
// part out of the name with a stats_tags extractor `(tag=\.=(.*?);\.;)` (Higress/Istio generate one
// per `extraStatTags` entry) and prints it as a label. Used at definition time only.
import { POLICY_ENDPOINT_METRICS, POLICY_GLOBAL_LEAST_REQUEST, POLICY_HEADER, POLICY_PREFIX_CACHE } from "../config/lb_config";

/** One label, to be followed by more labels or the metric name. */
export function tag(name: string, value: string): string {
  return name + "=.=" + value + ";.;";
}

/** The reasons a policy is known to give (their counters exist at 0 before traffic). */
export function reasonsOf(policy: string): string[] {
  if (policy == POLICY_GLOBAL_LEAST_REQUEST) return ["least_request", "local_fallback"];
  if (policy == POLICY_PREFIX_CACHE) return ["prefix_hit", "prefix_miss", "prefix_spill", "local_fallback"];
  if (policy == POLICY_ENDPOINT_METRICS) {
    return ["endpoint_metrics:metrics", "endpoint_metrics:inflight", "endpoint_metrics:rate_limit", "local_fallback"];
  }
  if (policy == POLICY_HEADER) return ["header"];
  return [];
}

/**
 * The part of a reason that names it: up to the first part holding a value (`name=value`), so
 * predicted_latency's "predicted_latency:slo_tpot_fit:ttft=41.2:tpot=9.8:q=3:wait=0" (whose numbers
 * the debug header shows) counts as "predicted_latency:slo_tpot_fit". Keyed by the whole reason,
 * each pick defined a counter of its own and kept its string for the VM's life.
 */
export function reasonKey(reason: string): string {
  const eq = reason.indexOf("=");
  if (eq < 0) return reason;
  const colon = reason.lastIndexOf(":", eq);
  return colon > 0 ? reason.substring(0, colon) : reason;
}

/**
 * The label of a reason: without the policy's own prefix ("endpoint_metrics:metrics" -> "metrics"),
 * characters outside [a-z0-9_] as "_" (a reason can come from a Redis reply; it must not end the tag).
 */
export function reasonLabel(policy: string, reason: string): string {
  const raw = reason.startsWith(policy + ":") ? reason.substring(policy.length + 1) : reason;
  if (raw.length == 0) return "none";
  let label = "";
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    const ok = (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == 0x5f;
    label += ok ? raw.charAt(i) : "_";
  }
  return label;
}
