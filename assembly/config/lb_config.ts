// One resolved load-balancing configuration (the top level, or one `_rules_` entry).
// Keys of Higress's ai-load-balancer are accepted verbatim (lb_type, lb_policy, lb_config with
// serviceFQDN, servicePort, username, password, timeout, database, redisKeyTTL, maxRequestCount,
// cleanInterval, enableDetailLog, metric_policy, target_metric, rate_limit); the rest are ours and
// documented in README ("Configuration"). Defaults live here, next to their validation.
import { JsonValue } from "../json/value";
import { ConfigErrors, ConfigReader, describeText } from "./reader";
import { PrefixSettings, parsePrefixSettings, PREFIX_KEYS } from "./prefix_settings";
import { MetricsSettings, parseMetricsSettings, METRICS_KEYS } from "./metrics_settings";
import { ClusterMetricsSettings, parseClusterMetricsSettings, MODE_NAMES } from "./cluster_metrics_settings";
import { ClusterHashSettings, parseClusterHashSettings } from "./cluster_hash_settings";
import { EndpointHashSettings, parseEndpointHashSettings, ENDPOINT_HASH_KEYS } from "./endpoint_hash_settings";
import { checkClusterKeys, isClusterPolicy, POLICY_CLUSTER_HASH, POLICY_CLUSTER_METRICS } from "./cluster_settings";
import { checkKeys, HIGRESS_FOREIGN_KEYS } from "./higress_keys";
import { SloSettings, parseSloSettings, SLO_KEYS } from "./slo_settings";
import { QueueSettings, parseQueueSettings, QUEUE_KEYS } from "./queue_settings";

export { POLICY_CLUSTER_HASH, POLICY_CLUSTER_METRICS } from "./cluster_settings";

export const POLICY_NONE = "none";
export const POLICY_GLOBAL_LEAST_REQUEST = "global_least_request";
export const POLICY_PREFIX_CACHE = "prefix_cache";
export const POLICY_ENDPOINT_METRICS = "endpoint_metrics";
export const POLICY_ENDPOINT_HASH = "endpoint_hash";
export const POLICY_HEADER = "header";
export const POLICY_PREDICTED_LATENCY = "predicted_latency";

const POLICIES: string[] = [POLICY_GLOBAL_LEAST_REQUEST, POLICY_PREFIX_CACHE, POLICY_ENDPOINT_METRICS,
  "least_busy", "metrics_based", POLICY_CLUSTER_METRICS, POLICY_CLUSTER_HASH, POLICY_ENDPOINT_HASH, POLICY_HEADER, POLICY_PREDICTED_LATENCY];

export class RedisSettings {
  /** Envoy cluster name: outbound|<port>||<fqdn>[?db=N]. */
  cluster: string = "";
  username: string = "";
  password: string = "";
  timeoutMs: u32 = 3000;
}

export class LbConfig {
  lbType: string = "endpoint";
  policy: string = POLICY_NONE;
  redis: RedisSettings | null = null;
  // Accounting (shared by every Redis-backed policy)
  keyPrefix: string = "llmlb";
  /** route_cluster: counts per route and cluster (Higress); cluster: shared by every route of a cluster. */
  keyScope: string = "route_cluster";
  /** The pool's cluster part when it is not the routed cluster (cluster_metrics: its mode). */
  poolCluster: string = "";
  leaseTtlMs: i64 = 60000;
  candidateTtlMs: i64 = 30000;
  hostStaleMs: i64 = 3600000;
  costMode: string = "count";
  // Shedding
  maxRequestCount: i64 = 0;
  shedStatus: u32 = 429;
  retryAfterSeconds: i64 = 1;
  priorityHeader: string = "x-llm-priority";
  highPriorityValue: string = "high";
  lowPriorityValue: string = "low";
  lowPriorityFraction: f64 = 0.5;
  // Fail-fast hosts
  failurePenalty: i64 = 2;
  failurePenaltyMs: i64 = 10000;
  // Redis outage handling
  breakerFailures: i64 = 3;
  breakerOpenMs: i64 = 5000;
  /** How long a held request waits for its pick's Redis reply before the local fallback. */
  pickDeadlineMs: i64 = 50;
  // Hand-off and debugging
  destinationHeader: string = "";
  debugHeader: string = "";
  staticHosts: string[] = [];
  healthyStatuses: string[] = ["Healthy"];
  /** Re-read the routed cluster's host map at most this often per VM (0: every request). */
  hostsRefreshMs: i64 = 0;
  bodilessRequests: string = "passthrough";
  maxBodyBytes: i64 = 4194304;
  detailLog: bool = false;
  // Test-only header policy
  endpointHeader: string = "x-llmlb-endpoint";
  prefix: PrefixSettings = new PrefixSettings();
  metrics: MetricsSettings = new MetricsSettings();
  slo: SloSettings = new SloSettings();
  queue: QueueSettings = new QueueSettings();
  clusterMetrics: ClusterMetricsSettings = new ClusterMetricsSettings();
  clusterHash: ClusterHashSettings = new ClusterHashSettings();
  endpointHash: EndpointHashSettings = new EndpointHashSettings();

  usesRedis(): bool { return this.redis !== null; }
}

const COMMON_KEYS: string[] = ["serviceFQDN", "servicePort", "username", "password", "timeout", "database",
  "keyPrefix", "leaseTTL", "candidateTTL", "cleanInterval", "costMode", "maxRequestCount", "shedStatus",
  "retryAfter", "priorityHeader", "highPriorityValue", "lowPriorityValue", "lowPriorityFraction",
  "failurePenalty", "failurePenaltySeconds", "breakerFailures", "breakerOpenSeconds", "pickDeadlineMs", "destinationHeader",
  "debugHeader", "staticHosts", "healthyStatuses", "hostsRefreshMs", "bodilessRequests", "maxBodyBytes", "enableDetailLog",
  "header", "keyScope"];

function needsRedis(policy: string): bool {
  return policy == POLICY_GLOBAL_LEAST_REQUEST || policy == POLICY_PREFIX_CACHE || policy == POLICY_ENDPOINT_HASH;
}

function parseRedis(r: ConfigReader, policy: string): RedisSettings | null {
  const required = needsRedis(policy);
  if (!r.has("serviceFQDN") && !required) return null;
  const s = new RedisSettings();
  const fqdn = r.hostName("serviceFQDN");
  const port = r.int("servicePort", 0, 0, 65535);
  if (fqdn.length == 0) r.errors.add(r.key("serviceFQDN") + " is required for lb_policy " + policy + " (the Redis service, e.g. redis.static)");
  if (port == 0) r.errors.add(r.key("servicePort") + " is required for lb_policy " + policy + " (the Redis port, e.g. 6379)");
  const db = r.int("database", 0, 0, 15);
  s.cluster = "outbound|" + port.toString() + "||" + fqdn + (db > 0 ? "?db=" + db.toString() : "");
  s.username = r.secret("username"); // an AUTH user name is half the credential: never printed
  s.password = r.secret("password");
  // Higress: 0 or missing means 3000 ms.
  const timeout = r.int("timeout", 3000, 0, 60000, "milliseconds");
  s.timeoutMs = <u32>(timeout == 0 ? 3000 : timeout);
  return s;
}

// Envoy's health states (HealthStatus names as proxy_get_upstream_hosts reports them).
const HEALTH_STATES: string[] = ["Healthy", "Degraded", "Unhealthy", "Draining", "Timeout", "Unknown"];

function healthStatuses(r: ConfigReader): string[] {
  const list = r.strList("healthyStatuses");
  for (let i = 0; i < list.length; i++) {
    if (!HEALTH_STATES.includes(list[i])) {
      r.errors.add(r.key("healthyStatuses") + "[" + i.toString() + "] must be one of " + HEALTH_STATES.join(", ") + ", got " + describeText(list[i]));
    }
  }
  return list;
}

/** Parses {lb_type, lb_policy, lb_config} of `obj`; errors are added to `errors`. */
export function parseLbConfig(obj: JsonValue, path: string, errors: ConfigErrors): LbConfig {
  const top = new ConfigReader(obj, path, errors);
  const c = new LbConfig();
  c.lbType = top.choice("lb_type", "endpoint", ["endpoint", "cluster"]);
  // "" is refused, as in Higress ("lb_psolicy  is not supported"); lb_type "" is endpoint there.
  let policy = top.choice("lb_policy", POLICY_NONE, POLICIES, false);
  if (policy == "least_busy" || policy == "metrics_based") policy = POLICY_ENDPOINT_METRICS;
  // Higress: lb_type cluster takes only cluster policies, endpoint only endpoint ones (main.go 60-93).
  if (policy != POLICY_NONE && (c.lbType == "cluster") != isClusterPolicy(policy)) {
    errors.add(top.key("lb_policy") + (c.lbType == "cluster"
      ? " must be cluster_metrics or cluster_hash when lb_type is cluster, got "
      : " must be an endpoint policy when lb_type is endpoint (cluster_metrics and cluster_hash need lb_type: cluster), got ") + describeText(policy));
  }
  c.policy = policy;
  const r = top.child("lb_config");
  if (isClusterPolicy(policy)) {
    checkClusterKeys(r, policy);
    c.debugHeader = r.headerName("debugHeader", "", true);
    c.detailLog = r.bool("enableDetailLog", false);
    if (policy == POLICY_CLUSTER_HASH) {
      c.clusterHash = parseClusterHashSettings(r);
      return c;
    }
    const m = parseClusterMetricsSettings(r);
    c.clusterMetrics = m;
    c.pickDeadlineMs = parsePickDeadline(r);
    const rs = m.globalInflight ? parseRedis(r, policy) : null;
    if (rs !== null) {
      rs.timeoutMs = <u32>m.globalTimeoutMs;
      c.redis = rs;
      c.keyPrefix = m.globalKeyPrefix;
      c.poolCluster = MODE_NAMES[m.mode];
      c.failurePenalty = 0; // failures cool the service down (failure_cooldown_ms) instead
    }
    return c;
  }
  // endpoint_hash's own keys elsewhere are Higress keys of another policy (one warning), still
  // checked so a bad value is refused wherever it is written.
  let ours = COMMON_KEYS.concat(PREFIX_KEYS).concat(METRICS_KEYS).concat(SLO_KEYS).concat(QUEUE_KEYS);
  if (policy == POLICY_ENDPOINT_HASH) ours = ours.concat(ENDPOINT_HASH_KEYS);
  checkKeys(r, ours, HIGRESS_FOREIGN_KEYS, "not used by lb_policy " + policy);
  c.endpointHash = parseEndpointHashSettings(r);
  c.redis = parseRedis(r, policy);
  c.keyPrefix = r.str("keyPrefix", c.keyPrefix);
  r.checkKeyPrefix(r.key("keyPrefix"), c.keyPrefix);
  c.keyScope = r.choice("keyScope", "route_cluster", ["route_cluster", "cluster"]);
  c.leaseTtlMs = r.int("leaseTTL", 60, 2, 86400, "seconds") * 1000;
  c.candidateTtlMs = r.int("candidateTTL", 30, 1, 3600, "seconds") * 1000;
  // Higress: 0 or missing means 60 minutes.
  const clean = r.int("cleanInterval", 60, 0, 10080, "minutes");
  c.hostStaleMs = (clean == 0 ? 60 : clean) * 60000;
  c.costMode = r.choice("costMode", "count", ["count", "bytes", "tokens"]);
  c.maxRequestCount = r.int("maxRequestCount", 0, 0, 1000000000);
  c.shedStatus = <u32>r.int("shedStatus", 429, 400, 599);
  c.retryAfterSeconds = r.int("retryAfter", 1, 0, 3600, "seconds");
  c.priorityHeader = r.headerName("priorityHeader", c.priorityHeader, false);
  // Header values a client must send to be treated as high / low priority: possibly a token.
  c.highPriorityValue = r.secret("highPriorityValue", c.highPriorityValue);
  c.lowPriorityValue = r.secret("lowPriorityValue", c.lowPriorityValue);
  c.lowPriorityFraction = r.num("lowPriorityFraction", 0.5, 0.0, 1.0);
  c.failurePenalty = r.int("failurePenalty", 2, 0, 1000000);
  c.failurePenaltyMs = r.int("failurePenaltySeconds", 10, 0, 3600, "seconds") * 1000;
  c.breakerFailures = r.int("breakerFailures", 3, 1, 1000);
  c.breakerOpenMs = r.int("breakerOpenSeconds", 5, 1, 3600, "seconds") * 1000;
  c.pickDeadlineMs = parsePickDeadline(r);
  c.destinationHeader = r.headerName("destinationHeader", "", true);
  c.debugHeader = r.headerName("debugHeader", "", true);
  c.staticHosts = r.hostPortList("staticHosts");
  if (r.has("healthyStatuses")) c.healthyStatuses = healthStatuses(r);
  c.hostsRefreshMs = r.int("hostsRefreshMs", 0, 0, 60000, "milliseconds");
  c.bodilessRequests = r.choice("bodilessRequests", "passthrough", ["passthrough", "balance"]);
  c.maxBodyBytes = r.int("maxBodyBytes", 4194304, 1024, 1073741824, "bytes");
  c.detailLog = r.bool("enableDetailLog", false);
  c.endpointHeader = r.headerName("header", c.endpointHeader, false);
  c.prefix = parsePrefixSettings(r);
  c.metrics = parseMetricsSettings(r);
  c.slo = parseSloSettings(r);
  c.queue = parseQueueSettings(r);
  return c;
}

/** How long a pick waits for its Redis reply (ms), every policy that picks through Redis. */
function parsePickDeadline(r: ConfigReader): i64 {
  return r.int("pickDeadlineMs", 50, 1, 60000, "milliseconds");
}
