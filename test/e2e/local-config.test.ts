// The example configuration shipped in envoy/local/ is valid for the local gateway, and its plugin
// configuration is accepted by the built plugin (loaded in the test facade).
import { expect, it } from "vitest";
import { loadGatewayConfig } from "../../host-test/gateway/config.js";
import { TestHost } from "../../host-test/facade/index.js";

it("envoy/local/gateway.yaml parses and its plugin configuration is accepted by the plugin", async () => {
  const cfg = loadGatewayConfig("envoy/local/gateway.yaml");
  expect(cfg.clusters.map((c) => c.type)).toEqual(["static", "redis", "original_dst"]);
  expect(cfg.plugin!.wasm.endsWith("build/ai-load-balancer.wasm")).toBe(true);
  // The gateway's Redis clusters exist for the plugin, and only they (Envoy: redis_init on any other is BadArgument).
  const redisClusters = cfg.clusters.filter((c) => c.type === "redis").map((c) => c.name);
  const h = await TestHost.create({ wasm: cfg.plugin!.wasm, configuration: cfg.plugin!.configuration, logLevel: "info", redisClusters });
  expect(h.configured).toEqual([true]);
  expect(h.logMessages("warn").filter((m) => m.includes("redis_init"))).toEqual([]);
  h.close();
});
