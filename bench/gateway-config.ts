// The gateway YAML for one benchmark policy: one static cluster of the simulated pods (Higress's
// `outbound|port||fqdn` naming), the Redis cluster the plugin's serviceFQDN/servicePort resolve
// to, one route on /, and the plugin (or none). Parsed back with the gateway's own parser so a
// benchmark never runs a config the gateway would refuse. The YAML itself comes from
// host-test/local-stack.ts (the same builder npm start and the e2e tests use).
// Failure behaviour: parseGatewayConfig's errors (bad endpoints, ...) propagate; startup only.
import path from "node:path";
import { localGatewayYaml } from "../host-test/local-stack.js";
import { parseGatewayConfig, type GatewayConfig } from "../host-test/gateway/config.js";
import type { GatewayPolicy } from "./policies.js";

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
  return localGatewayYaml({
    endpoints: input.endpoints,
    redisPort: input.redisPort,
    plugin: policy.plugin && input.redisPort !== null ? policy.plugin(input.redisPort) : null,
    workers: input.workers,
    clusterLb: policy.clusterLb,
    healthCheckMs: policy.metricsHealthCheck ? input.metricsIntervalMs : 0,
    unhealthyThreshold: 3,
    // A long route timeout: queueing past capacity is what some scenarios measure.
    routeTimeoutMs: 600_000,
    adminPort: null,
    // Absolute: a child gateway resolves relative paths against the YAML file's directory.
    wasm: path.join(input.repoRoot, WASM_PATH),
    logLevel: "warn",
  });
}

export function gatewayConfig(input: GatewayConfigInput): GatewayConfig {
  return parseGatewayConfig(gatewayYaml(input), input.repoRoot);
}
