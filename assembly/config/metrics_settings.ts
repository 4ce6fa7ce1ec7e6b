// endpoint_metrics settings (lb_config keys; Higress's metric_policy, target_metric, rate_limit
// plus the thresholds Higress hard-codes). Defaults are documented in README ("endpoint_metrics").
import { ConfigReader } from "./reader";

export const METRICS_KEYS: string[] = ["metric_policy", "target_metric", "rate_limit", "queueThreshold",
  "kvThreshold", "loraQueueThreshold", "scoring", "queueWeight", "kvWeight", "prefixWeight", "loraWeight",
  "latencyWeight", "metricsSource", "metricsPath", "metricsCluster", "scrapeIntervalMs", "scrapeTimeoutMs",
  "staleAfterMs", "stalePolicy", "queueLimit", "kvLimit", "engine"];

export class MetricsSettings {
  metricPolicy: string = "default";
  targetMetric: string = "";
  rateLimit: f64 = 1.0;
  /** Filter tree (Higress/GIE): band width divisor for the least-queue filter ... */
  queueThreshold: f64 = 5.0;
  kvThreshold: f64 = 0.8;
  loraQueueThreshold: f64 = 50.0;
  scoring: string = "filter";
  queueWeight: f64 = 2.0;
  kvWeight: f64 = 2.0;
  prefixWeight: f64 = 3.0;
  loraWeight: f64 = 1.0;
  latencyWeight: f64 = 0.0;
  source: string = "health_check";
  path: string = "/metrics";
  cluster: string = "";
  scrapeIntervalMs: i64 = 1000;
  scrapeTimeoutMs: i64 = 500;
  staleAfterMs: i64 = 5000;
  stalePolicy: string = "saturated";
  queueLimit: f64 = 5.0;
  kvLimit: f64 = 0.8;
  engine: string = "auto";
}

export function parseMetricsSettings(r: ConfigReader): MetricsSettings {
  const s = new MetricsSettings();
  s.metricPolicy = r.choice("metric_policy", "default", ["default", "least", "most"]);
  s.targetMetric = r.str("target_metric", "");
  if (s.metricPolicy != "default" && s.targetMetric.length == 0 && r.has("metric_policy")) {
    r.errors.add(r.key("target_metric") + " is required when metric_policy is " + s.metricPolicy);
  }
  s.rateLimit = r.num("rate_limit", 1.0, 0.0, 1.0);
  s.queueThreshold = r.num("queueThreshold", 5.0, 0.0, 1e9);
  s.kvThreshold = r.num("kvThreshold", 0.8, 0.0, 1.0);
  s.loraQueueThreshold = r.num("loraQueueThreshold", 50.0, 0.0, 1e9);
  s.scoring = r.choice("scoring", "filter", ["filter", "weighted"]);
  s.queueWeight = r.num("queueWeight", 2.0, 0.0, 1000.0);
  s.kvWeight = r.num("kvWeight", 2.0, 0.0, 1000.0);
  s.prefixWeight = r.num("prefixWeight", 3.0, 0.0, 1000.0);
  s.loraWeight = r.num("loraWeight", 1.0, 0.0, 1000.0);
  s.latencyWeight = r.num("latencyWeight", 0.0, 0.0, 1000.0);
  s.source = r.choice("metricsSource", "health_check", ["health_check", "poll"]);
  s.path = r.str("metricsPath", "/metrics");
  s.cluster = r.str("metricsCluster", "");
  s.scrapeIntervalMs = r.int("scrapeIntervalMs", 1000, 50, 3600000);
  s.scrapeTimeoutMs = r.int("scrapeTimeoutMs", 500, 10, 60000);
  s.staleAfterMs = r.int("staleAfterMs", 5000, 100, 86400000);
  s.stalePolicy = r.choice("stalePolicy", "saturated", ["saturated", "inflight_only"]);
  s.queueLimit = r.num("queueLimit", 5.0, 0.0, 1e9);
  s.kvLimit = r.num("kvLimit", 0.8, 0.0, 1.0);
  s.engine = r.choice("engine", "auto", ["auto", "vllm", "sglang"]);
  return s;
}
