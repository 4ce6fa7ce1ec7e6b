// endpoint_metrics settings (lb_config keys). Higress's metric_policy, target_metric, rate_limit,
// window_size and window_seconds keep their meaning; every constant Higress hard-codes is a key.
// Defaults sit next to their validation; the policy's behaviour is described in
// assembly/metrics_policy/README.md.
import { ConfigReader, describeText } from "./reader";
import { isMetricName, isPathText } from "./text_checks";
import { fnv1a64 } from "../util/fnv";
import { u64ToHexLower } from "../util/hex";

export const METRICS_KEYS: string[] = ["metric_policy", "target_metric", "rate_limit", "window_size", "window_seconds",
  "rateLimitScope", "queueThreshold", "kvThreshold", "loraQueueThreshold", "loraAdapters", "scoring", "queueWeight",
  "kvWeight", "prefixWeight", "loraWeight", "latencyWeight", "latencyAlpha", "metricsSource", "metricsPath",
  "metricsCluster", "scrapeIntervalMs", "scrapeTimeoutMs", "reparseIntervalMs", "inflightRefreshMs", "staleAfterMs",
  "stalePolicy", "queueLimit", "kvLimit", "engine", "shedWhenSaturated"];

export const METRIC_POLICY_DEFAULT = "default";
export const METRIC_POLICY_LEAST = "least";
export const METRIC_POLICY_MOST = "most";
export const SCORING_FILTER = "filter";
export const SCORING_WEIGHTED = "weighted";
export const SOURCE_HEALTH_CHECK = "health_check";
export const SOURCE_POLL = "poll";
export const STALE_SATURATED = "saturated";
export const STALE_INFLIGHT_ONLY = "inflight_only";
export const SHED_NEVER = "never";

export class MetricsSettings {
  metricPolicy: string = METRIC_POLICY_DEFAULT;
  targetMetric: string = "";
  /** Max share of the last `windowSize` picks (within `windowSeconds`) one host may take. */
  rateLimit: f64 = 1.0;
  windowSize: i32 = 100;
  windowSeconds: i64 = 60;
  /** "gateway": the pick window is shared by the VMs of one gateway (shared data); "vm": Higress. */
  rateLimitScope: string = "gateway";
  /** Low-priority requests (GIE "sheddable") only go to hosts with waiting <= queueThreshold and
   *  KV <= kvThreshold; with none, they are shed. Higress hard-codes 5 and 0.8. */
  queueThreshold: f64 = 5.0;
  kvThreshold: f64 = 0.8;
  /** Below this queue length LoRA affinity comes first (Higress hard-codes 50). */
  loraQueueThreshold: f64 = 50.0;
  /** Adapter names known in advance (besides those the servers report as running/waiting). */
  loraAdapters: string[] = [];
  scoring: string = SCORING_FILTER;
  queueWeight: f64 = 2.0;
  kvWeight: f64 = 2.0;
  /** Reserved for combining with prefix_cache scores; endpoint_metrics has no prefix signal. */
  prefixWeight: f64 = 3.0;
  loraWeight: f64 = 1.0;
  latencyWeight: f64 = 0.0;
  /** Weight of a new observation in the per-host latency EWMA. */
  latencyAlpha: f64 = 0.2;
  source: string = SOURCE_HEALTH_CHECK;
  path: string = "/metrics";
  cluster: string = "";
  scrapeIntervalMs: i64 = 1000;
  scrapeTimeoutMs: i64 = 500;
  /** A host's metrics text is looked at (extracted, fingerprinted) at most this often per VM. */
  reparseIntervalMs: i64 = 200;
  /** How often the fleet's in-flight counts are read from Redis (inspect.lua). */
  inflightRefreshMs: i64 = 200;
  staleAfterMs: i64 = 5000;
  stalePolicy: string = STALE_SATURATED;
  /** Saturation: max(waiting / queueLimit, kv / kvLimit) >= 1 (GIE's saturation detector: 5, 0.8). */
  queueLimit: f64 = 5.0;
  kvLimit: f64 = 0.8;
  /** Who is shed when every host is saturated: "low" (GIE: only sheddable requests; the default,
   *  so configurations migrated from Higress, which never sheds, keep serving normal traffic),
   *  "normal" (normal and low), "never". High priority is never shed. */
  shedWhenSaturated: string = "low";
  engine: string = "auto";
  private tag: string = "";

  /**
   * What a pod's parsed report depends on besides the pod (source, engine, metrics cluster and
   * path, target metric), as 16 hex digits: the shared-data keys of reports and scrape claims
   * carry it. Envoy's shared data is one namespace for every plugin of a vm_id (Higress sets none:
   * all of them), so two rules polling the same pods with another target metric, engine or
   * source must not read each other's reports, nor skip their scrape for the other's claim.
   */
  reportTag(): string {
    if (this.tag.length == 0) {
      this.tag = u64ToHexLower(fnv1a64(this.source + "\n" + this.engine + "\n" + this.cluster + "\n" + this.path + "\n" + this.targetMetric));
    }
    return this.tag;
  }
}

export function parseMetricsSettings(r: ConfigReader): MetricsSettings {
  const s = new MetricsSettings();
  s.metricPolicy = r.choice("metric_policy", METRIC_POLICY_DEFAULT, [METRIC_POLICY_DEFAULT, METRIC_POLICY_LEAST, METRIC_POLICY_MOST]);
  s.targetMetric = r.str("target_metric", "");
  if (s.targetMetric.length > 0 && !isMetricName(s.targetMetric)) {
    r.errors.add(r.key("target_metric") + " must be a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*), got " + describeText(s.targetMetric));
  }
  if (s.metricPolicy != METRIC_POLICY_DEFAULT && s.targetMetric.length == 0 && r.has("metric_policy")) {
    r.errors.add(r.key("target_metric") + " is required when metric_policy is " + s.metricPolicy);
  }
  s.rateLimit = r.num("rate_limit", 1.0, 0.0, 1.0);
  // Higress PR #4260: 0 or missing means 100 entries / 60 s.
  const size = r.int("window_size", 100, 0, 10000);
  s.windowSize = <i32>(size == 0 ? 100 : size);
  const seconds = r.int("window_seconds", 60, 0, 86400, "seconds");
  s.windowSeconds = seconds == 0 ? 60 : seconds;
  s.rateLimitScope = r.choice("rateLimitScope", "gateway", ["gateway", "vm"]);
  s.queueThreshold = r.num("queueThreshold", 5.0, 0.0, 1e9);
  s.kvThreshold = r.num("kvThreshold", 0.8, 0.0, 1.0);
  s.loraQueueThreshold = r.num("loraQueueThreshold", 50.0, 0.0, 1e9);
  s.loraAdapters = r.strList("loraAdapters");
  s.scoring = r.choice("scoring", SCORING_FILTER, [SCORING_FILTER, SCORING_WEIGHTED]);
  s.queueWeight = r.num("queueWeight", 2.0, 0.0, 1000.0);
  s.kvWeight = r.num("kvWeight", 2.0, 0.0, 1000.0);
  s.prefixWeight = r.num("prefixWeight", 3.0, 0.0, 1000.0);
  s.loraWeight = r.num("loraWeight", 1.0, 0.0, 1000.0);
  s.latencyWeight = r.num("latencyWeight", 0.0, 0.0, 1000.0);
  s.latencyAlpha = r.num("latencyAlpha", 0.2, 0.001, 1.0);
  s.source = r.choice("metricsSource", SOURCE_HEALTH_CHECK, [SOURCE_HEALTH_CHECK, SOURCE_POLL]);
  s.path = r.str("metricsPath", "/metrics");
  if (!isPathText(s.path)) r.errors.add(r.key("metricsPath") + " must be a path starting with '/' without spaces or control characters, got " + describeText(s.path));
  s.cluster = r.str("metricsCluster", "");
  if (s.cluster.length > 0) r.checkClusterName(r.key("metricsCluster"), s.cluster);
  if (s.source == SOURCE_POLL && s.cluster.length == 0) {
    r.errors.add(r.key("metricsCluster") + " is required when metricsSource is poll (an ORIGINAL_DST cluster with use_http_header: true)");
  }
  s.scrapeIntervalMs = r.int("scrapeIntervalMs", 1000, 50, 3600000, "milliseconds");
  s.scrapeTimeoutMs = r.int("scrapeTimeoutMs", 500, 10, 60000, "milliseconds");
  s.reparseIntervalMs = r.int("reparseIntervalMs", 200, 0, 3600000, "milliseconds");
  s.inflightRefreshMs = r.int("inflightRefreshMs", 200, 50, 60000, "milliseconds");
  s.staleAfterMs = r.int("staleAfterMs", 5000, 100, 86400000, "milliseconds");
  // Polled, a report is refreshed every scrapeIntervalMs and answered within scrapeTimeoutMs: a
  // shorter staleAfterMs makes every pod's metrics stale before the next scrape answers, and the
  // pods flap between fresh and stale (saturated) on every interval.
  const cycle = s.scrapeIntervalMs + s.scrapeTimeoutMs;
  if (s.source == SOURCE_POLL && s.staleAfterMs <= cycle) {
    r.errors.add(r.key("staleAfterMs") + " must be more than scrapeIntervalMs + scrapeTimeoutMs (" + cycle.toString() + " ms) when metricsSource is poll, got " + s.staleAfterMs.toString());
  }
  s.stalePolicy = r.choice("stalePolicy", STALE_SATURATED, [STALE_SATURATED, STALE_INFLIGHT_ONLY]);
  s.queueLimit = r.num("queueLimit", 5.0, 0.0, 1e9);
  s.kvLimit = r.num("kvLimit", 0.8, 0.0, 1.0);
  s.shedWhenSaturated = r.choice("shedWhenSaturated", "low", ["low", "normal", "never"]);
  s.engine = r.choice("engine", "auto", ["auto", "vllm", "sglang"]);
  return s;
}
