// One benchmark topology per policy run, fresh each time (cold caches, empty Redis): M simulated
// pods, Redis when the policy needs it, and the front the load generator talks to: N gateway
// replicas (plugin per policy; in-process or child processes) or the bench picker proxy.
// Sizing for 2 cores (measured, see bench/README.md): the pods and the load generator share this
// process; gateways default to in-process for 1 replica (smoke, CI) and to child processes for
// several, so the wasm plugin's CPU does not stall the load generator's clock.
// Failure behaviour: rejects if a part cannot start (everything started is stopped first).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startRedis, type RedisFixture } from "../host-test/redis-server.js";
import { startSimFleet, type SimFleet } from "../host-test/sim/fleet.js";
import type { SimProfile } from "../host-test/sim/profiles.js";
import type { SimPod } from "../host-test/sim/server.js";
import { gatewayYaml } from "./gateway-config.js";
import { startGatewayReplicas, type GatewayMode } from "./gateway-launcher.js";
import { createPicker } from "./pickers.js";
import { startPickerProxy } from "./picker-proxy.js";
import { POLICIES, type PolicyName } from "./policies.js";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export interface TopologySpec {
  pods: number;
  profile: string;
  profileOverrides?: Partial<SimProfile>;
  /** Simulated ms per wall ms. */
  timeScale: number;
  seed: number;
  /** Gateway replicas (ignored by proxy policies: the central picker is one process). */
  gateways: number;
  gatewayMode?: GatewayMode;
  /** Wasm VMs per gateway. */
  workers?: number;
  /** Wall ms between /metrics health checks for endpoint_metrics (default 100). */
  metricsIntervalMs?: number;
}

export interface Topology {
  policy: PolicyName;
  pods: SimPod[];
  urls: string[];
  redis: RedisFixture | null;
  close(): Promise<void>;
}

export function defaultGatewayMode(gateways: number): GatewayMode {
  return gateways > 1 ? "process" : "inprocess";
}

export async function startTopology(spec: TopologySpec, policyName: PolicyName, lbConfig?: Record<string, unknown>): Promise<Topology> {
  const base = POLICIES[policyName];
  const plugin = base.kind === "gateway" ? base.plugin : null;
  // A sweep's lb_config override is merged into the policy's own lb_config.
  const policy = lbConfig && base.kind === "gateway" && plugin
    ? { ...base, plugin: (port: number) => { const c = plugin(port); return { ...c, lb_config: { ...(c.lb_config as Record<string, unknown>), ...lbConfig } }; } }
    : base;
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const c of closers.reverse()) await c();
  };
  try {
    const fleet: SimFleet = await startSimFleet(spec.pods, {
      profile: spec.profile,
      profileOverrides: spec.profileOverrides,
      timeScale: spec.timeScale,
      seed: spec.seed,
    });
    closers.push(() => fleet.close());
    let redis: RedisFixture | null = null;
    let urls: string[];
    if (policy.kind === "proxy") {
      const proxy = await startPickerProxy(fleet.pods, createPicker(policy, fleet.pods, null));
      closers.push(() => proxy.close());
      urls = [proxy.url];
    } else {
      if (policy.needsRedis) {
        const r = await startRedis();
        redis = r;
        if (r.owned) closers.push(() => r.stop());
        else throw new Error("benchmarks need their own redis-server (unset REDIS_URL): Redis is flushed per run");
      }
      const yamlText = gatewayYaml({
        policy,
        endpoints: fleet.pods.map((p) => `${p.host}:${p.port}`),
        redisPort: redis?.port ?? null,
        workers: spec.workers ?? 1,
        metricsIntervalMs: spec.metricsIntervalMs ?? 100,
        repoRoot: REPO_ROOT,
      });
      const replicas = await startGatewayReplicas(yamlText, spec.gateways, spec.gatewayMode ?? defaultGatewayMode(spec.gateways), {
        repoRoot: REPO_ROOT,
        workDir: path.join(REPO_ROOT, "bench", "out", "tmp"),
        seed: spec.seed,
      });
      closers.push(() => replicas.close());
      urls = replicas.urls;
    }
    return { policy: policyName, pods: fleet.pods, urls, redis, close };
  } catch (e) {
    await close();
    throw e;
  }
}
