// The real local gateway: a node:http listener that routes requests (YAML routes), runs them
// through the Wasm filter (one VM per worker, streams assigned round robin) and proxies them to
// real upstreams, with active health checks, Redis for proxy_redis_call, and an admin server.
// Usage: const gw = await startGateway(loadGatewayConfig("gw.yaml")); ... await gw.close();
// Failure behaviour: startGateway rejects when the plugin module is refused or a port is taken;
// per-request failures become HTTP answers/endings (see proxy-stream.ts), never crashes.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { PluginHost } from "../abi/plugin-host.js";
import type { LogRecord } from "../abi/logs.js";
import type { WasmVm } from "../abi/vm.js";
import { matchRoute, type GatewayConfig, type PluginConfig } from "./config.js";
import { GatewayBackend } from "./gateway-backend.js";
import { HealthChecker } from "./health.js";
import { LocalLoadBalancer } from "./local-lb.js";
import { ProxyStream, type ProxyContext } from "./proxy-stream.js";
import { GatewayStats } from "./stats.js";
import { createAdminServer } from "./admin.js";
import { HIGRESS_PROFILE, type EnvoyProfile } from "../abi/envoy-profile.js";
import { SharedData, SharedQueues } from "../abi/shared-data.js";

/** Envoy bootstrap stats_flush_interval default (envoy.config.bootstrap.v3.Bootstrap). */
const STATS_FLUSH_MS = 5000;

export interface GatewayOptions {
  /** Envoy healthy_panic_threshold in percent; Istio/Higress disable panic mode (0, the default). */
  panicThresholdPercent?: number;
  failOpen?: boolean;
  /** Envoy behaviour where versions/listeners differ (default: Higress 2.2 on HTTP/1, envoy-profile.ts). */
  profile?: Partial<EnvoyProfile>;
  pluginName?: string;
  /** Seed for the local load balancers (reproducible runs). */
  lbSeed?: number;
  debugUpstreamHeader?: boolean;
  /** Live echo of plugin logs (the CLI prints them). */
  logEcho?: (r: LogRecord) => void;
  /**
   * More Wasm plugins on the same Envoy (Higress: other WasmPlugins), each running instead of the
   * main plugin on the routes it names. They share the workers and so the Redis clients.
   */
  extraPlugins?: Array<{ plugin: PluginConfig; routes: string[]; pluginName?: string }>;
}

export interface Gateway {
  url: string;
  adminUrl: string | null;
  stats: GatewayStats;
  vms: WasmVm[];
  plugin: PluginHost | null;
  /** The extra plugins, in GatewayOptions.extraPlugins order. */
  extraPlugins: PluginHost[];
  health: Map<string, HealthChecker>;
  /** The shared Redis clients (one per worker and Redis cluster). */
  backend: GatewayBackend;
  close(): Promise<void>;
}

function listen(server: http.Server, host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const a = server.address() as AddressInfo;
      resolve(`http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}`);
    });
  });
}

export async function startGateway(cfg: GatewayConfig, opts: GatewayOptions = {}): Promise<Gateway> {
  const agent = new http.Agent({ keepAlive: true });
  const health = new Map<string, HealthChecker>();
  const balancers = new Map<string, LocalLoadBalancer>();
  for (const c of cfg.clusters.filter((x) => x.type === "static")) {
    health.set(c.name, new HealthChecker(c));
    balancers.set(c.name, new LocalLoadBalancer(c.lb_policy, opts.lbSeed));
  }
  // Envoy warms clusters with their first health-check round before serving.
  for (const h of health.values()) h.start();
  await Promise.all([...health.values()].map((h) => h.checkNow()));
  const panicThresholdPercent = opts.panicThresholdPercent ?? 0;
  const profile: EnvoyProfile = { ...HIGRESS_PROFILE, ...opts.profile };
  const backend = new GatewayBackend(cfg, health, balancers, agent, panicThresholdPercent, profile);
  const stats = new GatewayStats();
  let plugin: PluginHost | null = null;
  const extraPlugins: PluginHost[] = [];
  // One Envoy's shared data and queues, for every plugin on it (Higress sets no vm_id).
  const sharedData = new SharedData();
  const sharedQueues = new SharedQueues();
  const load = (p: PluginConfig, pluginName: string) => PluginHost.load(p.wasm, backend, {
    workers: cfg.workers,
    rootId: p.root_id,
    vmConfiguration: p.vm_config,
    configuration: p.configuration,
    logLevel: p.log_level,
    pluginName,
    failOpen: opts.failOpen ?? false,
    profile,
    logEcho: opts.logEcho ?? null,
    sharedData,
    sharedQueues,
  });
  try {
    plugin = cfg.plugin === null ? null : await load(cfg.plugin, opts.pluginName ?? "llm-lb");
    for (const [i, extra] of (opts.extraPlugins ?? []).entries()) extraPlugins.push(await load(extra.plugin, extra.pluginName ?? `extra-${i}`));
  } catch (e) {
    for (const h of health.values()) h.stop();
    backend.close();
    agent.destroy();
    throw e;
  }
  // Envoy's stats flush (stats_flush_interval, 5 s by default) merges histograms for the admin page.
  const statsFlush = setInterval(() => { plugin?.metrics.mergeHistograms(); for (const p of extraPlugins) p.metrics.mergeHistograms(); }, STATS_FLUSH_MS).unref();
  const byRoute = new Map<string, PluginHost>();
  (opts.extraPlugins ?? []).forEach((extra, i) => { for (const r of extra.routes) byRoute.set(r, extraPlugins[i]); });
  const ctx: ProxyContext = {
    backend, stats, balancers, agent, panicThresholdPercent, debugUpstreamHeader: opts.debugUpstreamHeader ?? false,
    pluginFor: (route) => (route.plugin ? byRoute.get(route.name) ?? plugin : null),
  };
  const server = http.createServer((req, res) => {
    const route = matchRoute(cfg, req.headers.host ?? "", req.url ?? "/");
    if (!route) {
      // Envoy: no route -> 404 with the NR flag.
      stats.noRoute++;
      res.writeHead(404).end();
      return;
    }
    new ProxyStream(ctx, req, res, route).run();
  });
  const admin = cfg.admin ? createAdminServer(cfg, stats, plugin, health) : null;
  const url = await listen(server, cfg.listener.host, cfg.listener.port);
  const adminUrl = admin && cfg.admin ? await listen(admin, cfg.admin.host, cfg.admin.port) : null;
  const close = async () => {
    clearInterval(statsFlush);
    for (const h of health.values()) h.stop();
    plugin?.shutdown();
    for (const p of extraPlugins) p.shutdown();
    backend.close();
    server.closeAllConnections();
    admin?.closeAllConnections();
    await Promise.all([
      new Promise<void>((r) => server.close(() => r())),
      admin ? new Promise<void>((r) => admin.close(() => r())) : Promise.resolve(),
    ]);
    agent.destroy();
  };
  return { url, adminUrl, stats, vms: plugin?.vms ?? [], plugin, extraPlugins, health, backend, close };
}
