// A complete local deployment on loopback: a real redis-server, a simulated vLLM fleet, and one or
// more local gateways running the plugin, wired as Higress would see them (one static cluster
// `outbound|8000||vllm.static` of every pod with /metrics health checks, the Redis service as
// `outbound|<port>||redis.static`, one route `llm`). Used by `npm start` and the e2e tests.
// Failure behaviour: anything that fails to start stops what was already started, then rethrows.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { startRedis, type RedisFixture } from "./redis-server.js";
import { startSimFleet, type SimFleet } from "./sim/fleet.js";
import type { SimFleetOptions } from "./sim/fleet.js";
import { parseGatewayConfig, type GatewayConfig } from "./gateway/config.js";
import { startGateway, type Gateway, type GatewayOptions } from "./gateway/server.js";

export const MODEL_CLUSTER = "outbound|8000||vllm.static";
export const ROUTE_NAME = "llm";
export const REDIS_FQDN = "redis.static";
/** Envoy ORIGINAL_DST cluster through which endpoint_metrics polls each pod (metricsCluster). */
export const METRICS_CLUSTER = "metrics-original-dst";

export interface GatewayYamlInput {
  endpoints: string[];
  redisPort: number | null;
  /** The plugin's configuration (Higress WasmPlugin `config`); null = plugin off. */
  plugin: Record<string, unknown> | null;
  workers?: number;
  clusterLb?: "round_robin" | "least_request" | "random";
  /** Interval of the /metrics health check in ms; 0 = no health check. */
  healthCheckMs?: number;
  /** Consecutive failed checks before a host is unhealthy (default 2). */
  unhealthyThreshold?: number;
  /** Route timeout in ms (default 0: none, streamed completions may last minutes). */
  routeTimeoutMs?: number;
  listenPort?: number;
  adminPort?: number | null;
  wasm?: string;
  logLevel?: string;
}

/** The local gateway's YAML for one model cluster behind one route (see envoy/local/gateway.yaml). */
export function localGatewayYaml(i: GatewayYamlInput): string {
  const clusters: Record<string, unknown>[] = [{
    name: MODEL_CLUSTER,
    type: "static",
    lb_policy: i.clusterLb ?? "round_robin",
    connect_timeout_ms: 1000,
    endpoints: i.endpoints,
    ...(i.healthCheckMs ? { health_check: { path: "/metrics", interval_ms: i.healthCheckMs, timeout_ms: 1000, unhealthy_threshold: i.unhealthyThreshold ?? 2, healthy_threshold: 1 } } : {}),
  }];
  clusters.push({ name: METRICS_CLUSTER, type: "original_dst" });
  if (i.redisPort !== null) clusters.push({ name: `outbound|${i.redisPort}||${REDIS_FQDN}`, type: "redis", endpoints: [`127.0.0.1:${i.redisPort}`] });
  const doc: Record<string, unknown> = {
    listener: { host: "127.0.0.1", port: i.listenPort ?? 0 },
    ...(i.adminPort === null ? {} : { admin: { host: "127.0.0.1", port: i.adminPort ?? 0 } }),
    workers: i.workers ?? 2,
    clusters,
    // Envoy counts the route timeout from the request's end; 0 = none.
    routes: [{ name: ROUTE_NAME, match: { prefix: "/" }, cluster: MODEL_CLUSTER, timeout_ms: i.routeTimeoutMs ?? 0 }],
  };
  if (i.plugin) doc.plugin = { wasm: i.wasm ?? "build/ai-load-balancer.wasm", log_level: i.logLevel ?? "info", configuration: i.plugin };
  return stringify(doc);
}

export function localGatewayConfig(i: GatewayYamlInput, baseDir = process.cwd()): GatewayConfig {
  return parseGatewayConfig(localGatewayYaml(i), baseDir);
}

/** The Redis part of lb_config for the local Redis. */
/** pickDeadlineMs for tests that assert picks made through Redis: the default 50 ms is above the
 *  p99.9 round trip on a quiet machine, but a loaded CI machine (two cores, parallel test files)
 *  has taken longer, and the pick then falls back to the route's own balancing by design. */
export const SLOW_MACHINE_PICK_DEADLINE_MS = 2000;

export function redisLbConfig(redisPort: number): Record<string, unknown> {
  return { serviceFQDN: REDIS_FQDN, servicePort: redisPort, timeout: 1000 };
}

export interface LocalStackOptions {
  pods?: number;
  gateways?: number;
  workers?: number;
  fleet?: SimFleetOptions;
  /** Builds the plugin configuration once the Redis port is known; null = plugin off. */
  plugin: ((redisPort: number) => Record<string, unknown>) | null;
  healthCheckMs?: number;
  gatewayOptions?: GatewayOptions;
  listenPort?: number;
  adminPort?: number | null;
}

export interface LocalStack {
  redis: RedisFixture;
  fleet: SimFleet;
  gateways: Gateway[];
  close(): Promise<void>;
}

export async function startLocalStack(o: LocalStackOptions): Promise<LocalStack> {
  const started: Array<() => Promise<void>> = [];
  const close = async () => { for (const stop of started.reverse()) await stop().catch(() => {}); };
  try {
    const redis = await startRedis();
    started.push(() => redis.stop());
    const fleet = await startSimFleet(o.pods ?? 4, o.fleet ?? {});
    started.push(() => fleet.close());
    const endpoints = fleet.pods.map((p) => `${p.host}:${p.port}`);
    const gateways: Gateway[] = [];
    for (let g = 0; g < (o.gateways ?? 1); g++) {
      const cfg = localGatewayConfig({
        endpoints, redisPort: redis.port, plugin: o.plugin ? o.plugin(redis.port) : null, workers: o.workers,
        healthCheckMs: o.healthCheckMs ?? 1000, listenPort: g === 0 ? o.listenPort : 0, adminPort: g === 0 ? o.adminPort : 0,
      });
      const gw = await startGateway(cfg, o.gatewayOptions);
      started.push(() => gw.close());
      gateways.push(gw);
    }
    return { redis, fleet, gateways, close };
  } catch (e) {
    await close();
    throw e;
  }
}

export interface GatewayProcess {
  url: string;
  /** SIGKILL: no release, no goodbye; resolves once the process is gone. */
  kill(): Promise<void>;
}

/**
 * One more gateway as its own process (`host-test/cli/gateway.ts`) in front of the stack's pods and
 * Redis, so a test can kill it as a crashed replica dies. Resolves with its URL once it listens.
 * `dir` holds its YAML (the caller owns and removes it).
 */
export async function spawnGatewayProcess(stack: LocalStack, plugin: Record<string, unknown>, dir: string, name = "gw"): Promise<GatewayProcess> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, localGatewayYaml({
    endpoints: stack.fleet.pods.map((p) => `${p.host}:${p.port}`), redisPort: stack.redis.port,
    plugin, workers: 1, healthCheckMs: 1000, adminPort: null, wasm: join(process.cwd(), "build/ai-load-balancer.wasm"),
  }));
  const child = spawn(process.execPath, ["--import", "tsx", "host-test/cli/gateway.ts", "--config", file], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (c: Buffer) => { out += c; const m = /listening on (http:\/\/\S+)/.exec(out); if (m) resolve(m[1]); });
    child.once("exit", (code) => reject(new Error(`gateway exited ${code}: ${out}`)));
  });
  child.stdout!.resume();
  const kill = () => new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
  return { url, kill };
}
