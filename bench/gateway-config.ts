// The gateway YAML for one benchmark policy: one static cluster of the simulated pods (Higress's
// `outbound|port||fqdn` naming), the Redis cluster the plugin's serviceFQDN/servicePort resolve
// to, one route on /, and the plugin (or none). Parsed back with the gateway's own parser so a
// benchmark never runs a config the gateway would refuse.
// Failure behaviour: parseGatewayConfig's errors (bad endpoints, ...) propagate; startup only.
import path from "node:path";
import { stringify } from "yaml";
import { parseGatewayConfig, type GatewayConfig } from "../host-test/gateway/config.js";
import type { GatewayPolicy } from "./policies.js";

export const UPSTREAM_CLUSTER = "outbound|8000||vllm.static";
export const WASM_PATH = "build/ai-load-balancer.wasm";

export interface GatewayConfigInput {
  policy: GatewayPolicy;
  /** "ip:port" of every pod. */
  endpoints: string[];
  redisPort: number | null;
  /** Wasm VMs per gateway (Envoy worker threads). */
  workers: number;
  /** Wall ms between /metrics health checks (endpoint_metrics). */
  metricsIntervalMs: number;
  repoRoot: string;
}

export function gatewayYaml(input: GatewayConfigInput): string {
  const { policy } = input;
  if (policy.needsRedis && input.redisPort === null) throw new Error("gateway config: this policy needs Redis");
  const clusters: Record<string, unknown>[] = [{
    name: UPSTREAM_CLUSTER,
    lb_policy: policy.clusterLb,
    endpoints: input.endpoints,
    ...(policy.metricsHealthCheck
      ? { health_check: { path: "/metrics", interval_ms: input.metricsIntervalMs, timeout_ms: 1000, unhealthy_threshold: 3, healthy_threshold: 1 } }
      : {}),
  }];
  if (input.redisPort !== null) {
    clusters.push({ name: `outbound|${input.redisPort}||redis.static`, type: "redis", endpoints: [`127.0.0.1:${input.redisPort}`] });
  }
  const doc: Record<string, unknown> = {
    listener: { host: "127.0.0.1", port: 0 },
    workers: input.workers,
    clusters,
    // A long route timeout: queueing past capacity is what some scenarios measure.
    routes: [{ name: "llm", match: { prefix: "/" }, cluster: UPSTREAM_CLUSTER, timeout_ms: 600_000 }],
  };
  if (policy.plugin && input.redisPort !== null) {
    // Absolute: a child gateway resolves relative paths against the YAML file's directory.
    doc.plugin = { wasm: path.join(input.repoRoot, WASM_PATH), log_level: "warn", configuration: policy.plugin(input.redisPort) };
  }
  return stringify(doc);
}

export function gatewayConfig(input: GatewayConfigInput): GatewayConfig {
  return parseGatewayConfig(gatewayYaml(input), input.repoRoot);
}
