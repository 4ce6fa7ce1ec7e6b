// The example configuration shipped in envoy/local/ is valid for the local gateway, and its plugin
// configuration is accepted by the built plugin (loaded in the test facade).
import { expect, it } from "vitest";
import { loadGatewayConfig } from "../../host-test/gateway/config.js";
import { TestHost } from "../../host-test/facade/index.js";

it("envoy/local/gateway.yaml parses and its plugin configuration is accepted by the plugin", async () => {
  const cfg = loadGatewayConfig("envoy/local/gateway.yaml");
  expect(cfg.clusters.map((c) => c.type)).toEqual(["static", "redis", "original_dst"]);
  expect(cfg.plugin!.wasm.endsWith("build/ai-load-balancer.wasm")).toBe(true);
  const h = await TestHost.create({ wasm: cfg.plugin!.wasm, configuration: cfg.plugin!.configuration, logLevel: "info" });
  expect(h.configured).toEqual([true]);
  h.close();
});
