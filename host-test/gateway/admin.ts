// The gateway's admin server (the Envoy admin endpoints the tests and benchmarks use):
// /stats/prometheus (gateway counters + plugin metrics), /ready (200 LIVE when every VM accepted
// its configuration, else 503), /clusters (hosts and health as JSON).
// Failure behaviour: unknown paths are 404; never throws.
import http from "node:http";
import type { PluginHost } from "../abi/plugin-host.js";
import type { GatewayConfig } from "./config.js";
import type { HealthChecker } from "./health.js";
import type { GatewayStats } from "./stats.js";

export function createAdminServer(cfg: GatewayConfig, stats: GatewayStats, plugin: PluginHost | null, health: Map<string, HealthChecker>): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/stats/prometheus") {
      const body = stats.prometheus({ refusedWasmCalls: plugin?.refusedCalls ?? 0 }) + (plugin?.metrics.prometheus() ?? "");
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(body);
      return;
    }
    if (path === "/ready") {
      const ready = plugin === null || (plugin.configured.every(Boolean) && plugin.vms.every((v) => !v.failed));
      res.writeHead(ready ? 200 : 503, { "content-type": "text/plain" }).end(ready ? "LIVE\n" : "NOT READY\n");
      return;
    }
    if (path === "/clusters") {
      const clusters = cfg.clusters.map((c) => ({
        name: c.name,
        type: c.type,
        hosts: (health.get(c.name)?.snapshot() ?? c.endpoints.map((address) => ({ address, health: "Healthy", body: "" })))
          .map((h) => ({ address: h.address, health: h.health })),
      }));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ clusters }));
      return;
    }
    res.writeHead(404).end();
  });
}
