// The routing policies a scenario compares. Gateway policies run through the real local gateway
// (host-test/gateway), the baselines with the plugin off (the cluster's own Envoy load balancer)
// and ours with the plugin on; proxy policies run through bench/picker-proxy.ts (no gateway):
// the omniscient reference (no bound), and a plain round robin to measure the gateway's own overhead; the SLO
// oracles (virtual time only, bench/slo/slo-oracle-picker.ts).
// Plugin configurations use the keys of assembly/config/lb_config.ts and prefix/metrics settings.
import type { LbPolicy } from "../host-test/gateway/local-lb.js";

export type PolicyName =
  | "round_robin" | "random" | "least_request" | "prefix_affinity"
  | "global_least_request" | "global_least_tokens" | "global_least_bytes" | "prefix_cache" | "endpoint_metrics" | "metrics_prefix" | "predicted_latency" | "predicted_latency_hold"
  | "omniscient" | "precise_prefix" | "sglang_router" | "dynamo_kv" | "direct_round_robin" | "slo_oracle" | "slo_oracle_protect" | "slo_oracle_trade" | "slo_oracle_blind" | "slo_oracle_late" | "slo_oracle_fastest" | "slo_oracle_late_fastest";

export interface GatewayPolicy {
  kind: "gateway";
  description: string;
  /** The cluster's own load balancer (used when the plugin does not pick). */
  clusterLb: LbPolicy;
  /** Plugin configuration (Higress WasmPlugin `config`), null = plugin off. */
  plugin: ((redisPort: number) => Record<string, unknown>) | null;
  needsRedis: boolean;
  /** Active health checks on /metrics: how endpoint_metrics receives the engines' metrics. */
  metricsHealthCheck: boolean;
}

export interface ProxyPolicy {
  kind: "proxy";
  description: string;
  picker: "round_robin" | "omniscient" | "precise_prefix" | "sglang_router" | "dynamo_kv" | "slo_oracle" | "slo_oracle_protect" | "slo_oracle_trade" | "slo_oracle_blind" | "slo_oracle_late" | "slo_oracle_fastest" | "slo_oracle_late_fastest";
}

export type PolicySpec = GatewayPolicy | ProxyPolicy;

const redis = (port: number) => ({ serviceFQDN: "redis.static", servicePort: port, timeout: 1000 });

// Load gate far above any load the benchmarks reach: pure prefix affinity, like Higress's plugin.
const GATE_DISABLED = { loadGateAbs: 1_000_000, loadGateRel: 1000, loadGateCap: 0 };

export const POLICIES: Readonly<Record<PolicyName, PolicySpec>> = {
  round_robin: { kind: "gateway", description: "Envoy round robin (plugin off)", clusterLb: "round_robin", plugin: null, needsRedis: false, metricsHealthCheck: false },
  random: { kind: "gateway", description: "Envoy random (plugin off)", clusterLb: "random", plugin: null, needsRedis: false, metricsHealthCheck: false },
  least_request: { kind: "gateway", description: "Envoy least request, per gateway (plugin off)", clusterLb: "least_request", plugin: null, needsRedis: false, metricsHealthCheck: false },
  prefix_affinity: {
    kind: "gateway", description: "pure prefix affinity, Higress-equivalent (prefix_cache, gate off)", clusterLb: "round_robin",
    plugin: (port) => ({ lb_policy: "prefix_cache", lb_config: { ...redis(port), ...GATE_DISABLED } }), needsRedis: true, metricsHealthCheck: false,
  },
  global_least_request: {
    kind: "gateway", description: "ours: global least request (Redis)", clusterLb: "round_robin",
    plugin: (port) => ({ lb_policy: "global_least_request", lb_config: redis(port) }), needsRedis: true, metricsHealthCheck: false,
  },
  global_least_tokens: {
    kind: "gateway", description: "ours: global least in-flight tokens (Redis, costMode tokens; Galileo-like)", clusterLb: "round_robin",
    plugin: (port) => ({ lb_policy: "global_least_request", lb_config: { ...redis(port), costMode: "tokens" } }), needsRedis: true, metricsHealthCheck: false,
  },
  global_least_bytes: {
    kind: "gateway", description: "ours: global least in-flight bytes (Redis, costMode bytes; Galileo's byte-size cost)", clusterLb: "round_robin",
    plugin: (port) => ({ lb_policy: "global_least_request", lb_config: { ...redis(port), costMode: "bytes" } }), needsRedis: true, metricsHealthCheck: false,
  },
  prefix_cache: {
    kind: "gateway", description: "ours: prefix cache with load gate (Redis)", clusterLb: "round_robin",
    plugin: (port) => ({ lb_policy: "prefix_cache", lb_config: redis(port) }), needsRedis: true, metricsHealthCheck: false,
  },
  endpoint_metrics: {
    kind: "gateway", description: "ours: endpoint metrics (/metrics health checks + Redis in-flight)", clusterLb: "round_robin",
    plugin: (port) => ({ lb_policy: "endpoint_metrics", lb_config: { ...redis(port), metricsSource: "health_check" } }), needsRedis: true, metricsHealthCheck: true,
  },
  metrics_prefix: {
    kind: "gateway", description: "ours: endpoint metrics, weighted scorers incl. prefix affinity (EPP-style composition)", clusterLb: "round_robin",
    plugin: (port) => ({ lb_policy: "endpoint_metrics", lb_config: { ...redis(port), metricsSource: "health_check", scoring: "weighted" } }), needsRedis: true, metricsHealthCheck: true,
  },
  predicted_latency: {
    kind: "gateway", description: "ours: SLO-aware routing from the online latency model (bench/slo/)", clusterLb: "round_robin",
    plugin: (port) => ({ lb_policy: "predicted_latency", lb_config: { ...redis(port), debugHeader: "x-llmlb-debug" } }), needsRedis: true, metricsHealthCheck: false,
  },
  predicted_latency_hold: {
    kind: "gateway", description: "ours: predicted_latency with late binding (sloHoldMs 2000; modelBatchSlots 4, the SLO fleets' engines)", clusterLb: "round_robin",
    plugin: (port) => ({ lb_policy: "predicted_latency", lb_config: { ...redis(port), debugHeader: "x-llmlb-debug", modelBatchSlots: 4, sloHoldMs: 2000 } }),
    needsRedis: true, metricsHealthCheck: false,
  },
  omniscient: { kind: "proxy", description: "omniscient central picker (true queues + prefix caches): a reference, not a bound", picker: "omniscient" },
  precise_prefix: { kind: "proxy", description: "precise prefix central picker (EPP scorers prefix 3 / queue 2 / KV 2 on the engines' true caches)", picker: "precise_prefix" },
  sglang_router: { kind: "proxy", description: "peer: SGLang's router, cache_aware with its command-line defaults (approximate tree of routed texts, its own in-flight counts; bench/peers/)", picker: "sglang_router" },
  dynamo_kv: { kind: "proxy", description: "peer: Dynamo's KV router with its defaults (KV events = the engines' true caches, overlap weight 1, temperature 0; bench/peers/)", picker: "dynamo_kv" },
  direct_round_robin: { kind: "proxy", description: "round robin without the gateway (bench proxy)", picker: "round_robin" },
  slo_oracle: { kind: "proxy", description: "SLO oracle (virtual time): exact per-pod TTFT/TPOT from forked engines, predicted_latency's tpot_fit rule: a reference (greedy, blind to later arrivals), not a bound", picker: "slo_oracle" },
  slo_oracle_protect: { kind: "proxy", description: "SLO oracle (virtual time), protect rule: among pods meeting the SLO, the one after which the most tight requests sent 0-800 ms later could still be served", picker: "slo_oracle_protect" },
  slo_oracle_blind: { kind: "proxy", description: "SLO oracle (virtual time), tpot_fit, forecasting with the mean API overhead instead of the pod's next draw: the prediction error no router can remove", picker: "slo_oracle_blind" },
  slo_oracle_trade: { kind: "proxy", description: "SLO oracle (virtual time), trade rule: as protect, but a request may be given up when 3 such tight requests gain", picker: "slo_oracle_trade" },
  slo_oracle_fastest: { kind: "proxy", description: "SLO oracle (virtual time), fastest rule: the pod with the lowest exact TTFT, SLOs ignored: the TTFT bound of routing at arrival", picker: "slo_oracle_fastest" },
  slo_oracle_late_fastest: { kind: "proxy", description: "SLO oracle (virtual time) with late binding, fastest rule: requests held in arrival order for the pod of the lowest exact TTFT, SLOs ignored: the TTFT bound with late binding", picker: "slo_oracle_late_fastest" },
  slo_oracle_late: { kind: "proxy", description: "SLO oracle (virtual time) with late binding: requests held at the picker, sent in deadline order to a pod with a free slot (tpot_fit's choice): no engine queue", picker: "slo_oracle_late" },
};

export function isPolicyName(name: string): name is PolicyName {
  return Object.hasOwn(POLICIES, name);
}
