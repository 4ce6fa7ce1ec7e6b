// cluster_metrics settings (lb_type: cluster): every lb_config key of Higress's cluster_metrics
// (higress-parity.md section 8), with its default, validated; where Higress's own reading is a
// defect the key keeps its name and gets the sane meaning (README "cluster_metrics" lists each
// difference): a misspelt `mode` or `metrics_missing_policy` is refused (Higress: silently random /
// silently least_busy), `rate_limit` must be in (0, 1] and 1 means no limit, `failure_cooldown_ms: 0`
// disables the cooldown (Higress: 0 means 30000), negative sizes are refused (Higress: 16).
import { ConfigReader, describeText } from "./reader";

export const MODE_LEAST_BUSY = 0;
export const MODE_LEAST_TOTAL_LATENCY = 1;
export const MODE_LEAST_FIRST_TOKEN_LATENCY = 2;
export const MODE_ADAPTIVE_SCORE = 3;
export const MODE_NAMES: string[] = ["LeastBusy", "LeastTotalLatency", "LeastFirstTokenLatency", "AdaptiveScore"];

export const DEFAULT_CLUSTER_HEADER = "x-higress-target-cluster";


/** Case-sensitive, as Higress compares it; -1 for anything else. */
export function parseMode(s: string): i32 {
  for (let i = 0; i < MODE_NAMES.length; i++) if (MODE_NAMES[i] == s) return i;
  return -1;
}

export class ClusterMetricsSettings {
  mode: i32 = MODE_LEAST_BUSY;
  services: string[] = [];
  clusterHeader: string = DEFAULT_CLUSTER_HEADER;
  /** Max share of the last `queueSize` picks one service may take; 1 = no limit. */
  rateLimit: f64 = 1.0;
  /** Latency samples averaged per service, and the picks the rate limit looks at. */
  queueSize: i32 = 100;
  ewmaBeta: f64 = 0.5;
  p2cChoices: i32 = 2;
  ttftWeight: f64 = 0.7;
  totalLatencyWeight: f64 = 0.3;
  errorPenalty: f64 = 3.0;
  /** 0 = no cooldown. */
  failureCooldownMs: i64 = 30000;
  globalInflight: bool = false;
  globalKeyPrefix: string = "higress:adaptive_score_inflight";
  globalTimeoutMs: i64 = 3000;
  /** Read for compatibility; leases (60 s, renewed while streams are open) replace it. */
  globalKeyTtlSeconds: i64 = 1800;
}

/** Higress treats 0 (and a missing key, which gjson reads as 0) as "use the default". */
function intZeroDefault(r: ConfigReader, name: string, def: i64, min: i64, max: i64, unit: string = ""): i64 {
  const v = r.int(name, def, min, max, unit);
  return v == 0 ? def : v;
}

export function parseClusterMetricsSettings(r: ConfigReader): ClusterMetricsSettings {
  const s = new ClusterMetricsSettings();
  const mode = r.str("mode", "");
  s.mode = mode.length == 0 ? MODE_LEAST_BUSY : parseMode(mode); // missing or "": LeastBusy
  if (s.mode < 0) {
    r.errors.add(r.key("mode") + " must be one of " + MODE_NAMES.join(", ") + " (case-sensitive), got " + describeText(mode));
    s.mode = MODE_LEAST_BUSY;
  }
  s.services = r.strList("service_list");
  if (s.services.length == 0) r.errors.add(r.key("service_list") + " must be a non-empty list of cluster names");
  for (let i = 0; i < s.services.length; i++) {
    const name = s.services[i];
    const at = r.key("service_list") + "[" + i.toString() + "]";
    if (name.length == 0) r.errors.add(at + " must not be empty");
    else if (r.checkClusterName(at, name) && s.services.indexOf(name) < i) r.errors.add(at + " repeats " + describeText(name));
  }
  s.clusterHeader = r.headerNameOrDefault("cluster_header", DEFAULT_CLUSTER_HEADER);
  s.rateLimit = r.num("rate_limit", 1.0, 0.0, 1.0);
  if (s.rateLimit == 0.0) r.errors.add(r.key("rate_limit") + " must be in (0, 1] (1 = no limit), got 0");
  s.queueSize = <i32>intZeroDefault(r, "queue_size", 100, 0, 100000);
  s.ewmaBeta = r.num("ewma_beta", 0.5, 0.0, 1.0);
  s.p2cChoices = <i32>intZeroDefault(r, "p2c_choices", 2, 0, 1000);
  s.ttftWeight = r.num("ttft_weight", 0.7, 0.0, 1e9);
  s.totalLatencyWeight = r.num("total_latency_weight", 0.3, 0.0, 1e9);
  if (s.ttftWeight == 0.0 && s.totalLatencyWeight == 0.0) {
    r.errors.add(r.key("ttft_weight") + " must be > 0 when total_latency_weight is 0, got 0");
  }
  s.errorPenalty = r.num("error_penalty", 3.0, 0.0, 1e9);
  s.failureCooldownMs = r.int("failure_cooldown_ms", 30000, 0, 86400000, "milliseconds");
  r.choice("metrics_missing_policy", "least_busy", ["least_busy"]);
  s.globalInflight = r.bool("global_inflight_enabled", false);
  s.globalKeyPrefix = r.str("global_inflight_key_prefix", "");
  if (s.globalKeyPrefix.length == 0) s.globalKeyPrefix = "higress:adaptive_score_inflight";
  else r.checkKeyPrefix(r.key("global_inflight_key_prefix"), s.globalKeyPrefix);
  s.globalTimeoutMs = intZeroDefault(r, "global_inflight_timeout", 3000, 0, 60000, "milliseconds");
  s.globalKeyTtlSeconds = intZeroDefault(r, "global_inflight_key_ttl", 1800, 0, 31536000, "seconds");
  if (s.globalInflight && (!r.has("serviceFQDN") || !r.has("servicePort"))) {
    r.errors.add(r.key("serviceFQDN") + " and servicePort are required when global_inflight_enabled is true");
  }
  return s;
}
