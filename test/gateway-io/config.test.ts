// Gateway YAML: defaults, key-naming validation errors, plugin configuration, route matching.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { loadGatewayConfig, matchRoute, parseGatewayConfig } from "../../host-test/gateway/config.js";

const FULL = `
listener: { host: 127.0.0.1, port: 10000 }
admin: { host: 127.0.0.1, port: 15000 }
workers: 2
clusters:
  - name: "outbound|8000||vllm.static"
    type: static
    lb_policy: least_request
    connect_timeout_ms: 1000
    endpoints: ["127.0.0.1:8001", "127.0.0.1:8002"]
    health_check: { path: /metrics, interval_ms: 1000, timeout_ms: 500, unhealthy_threshold: 2, healthy_threshold: 1 }
  - name: "outbound|6379||redis.static"
    type: redis
    endpoints: ["127.0.0.1:6379"]
routes:
  - name: llm-route
    match: { prefix: "/v1/", domains: ["*.example.com", "api.local"] }
    cluster: "outbound|8000||vllm.static"
    timeout_ms: 300000
    plugin: true
  - name: fallback
    cluster: "outbound|8000||vllm.static"
    plugin: false
plugin:
  wasm: build/ai-load-balancer.wasm
  log_level: debug
  configuration:
    lb_policy: prefix_cache
    _rules_: [{ _match_route_: [llm-route], lb_policy: least_busy }]
`;

const MINIMAL = `
clusters:
  - name: up
    endpoints: ["10.0.0.1:80"]
`;

describe("parseGatewayConfig", () => {
  it("reads every key of a full file", () => {
    const cfg = parseGatewayConfig(FULL, "/etc/gw");
    expect(cfg.listener).toEqual({ host: "127.0.0.1", port: 10000 });
    expect(cfg.admin).toEqual({ host: "127.0.0.1", port: 15000 });
    expect(cfg.workers).toBe(2);
    expect(cfg.clusters[0]).toEqual({
      name: "outbound|8000||vllm.static",
      type: "static",
      lb_policy: "least_request",
      connect_timeout_ms: 1000,
      endpoints: ["127.0.0.1:8001", "127.0.0.1:8002"],
      health_check: { path: "/metrics", interval_ms: 1000, timeout_ms: 500, unhealthy_threshold: 2, healthy_threshold: 1 },
    });
    expect(cfg.clusters[1]).toMatchObject({ name: "outbound|6379||redis.static", type: "redis", health_check: null });
    expect(cfg.routes[0]).toEqual({
      name: "llm-route",
      match: { prefix: "/v1/", domains: ["*.example.com", "api.local"] },
      cluster: "outbound|8000||vllm.static",
      cluster_header: null,
      cluster_not_found_response_code: 503,
      timeout_ms: 300000,
      plugin: true,
    });
    expect(cfg.plugin).toMatchObject({ wasm: "/etc/gw/build/ai-load-balancer.wasm", root_id: "", vm_config: "", log_level: "debug" });
    expect(JSON.parse(cfg.plugin!.configuration)).toEqual({
      lb_policy: "prefix_cache",
      _rules_: [{ _match_route_: ["llm-route"], lb_policy: "least_busy" }],
    });
  });

  it("applies defaults (Envoy's where Envoy has one)", () => {
    const cfg = parseGatewayConfig(MINIMAL, "/x");
    expect(cfg.listener).toEqual({ host: "127.0.0.1", port: 10000 });
    expect(cfg.admin).toBeNull();
    expect(cfg.workers).toBe(1);
    expect(cfg.routes).toEqual([]);
    expect(cfg.plugin).toBeNull();
    expect(cfg.clusters[0]).toEqual({
      name: "up", type: "static", lb_policy: "round_robin", connect_timeout_ms: 5000, endpoints: ["10.0.0.1:80"], health_check: null,
    });
    const withRoute = parseGatewayConfig(`${MINIMAL}\nroutes: [{ cluster: up }]\n`, "/x");
    expect(withRoute.routes[0]).toEqual({ name: "", match: { prefix: "/", domains: ["*"] }, cluster: "up",
      cluster_header: null, cluster_not_found_response_code: 503, timeout_ms: 15000, plugin: true });
    const withHc = parseGatewayConfig(MINIMAL.replace('["10.0.0.1:80"]', '["10.0.0.1:80"]\n    health_check: {}'), "/x");
    expect(withHc.clusters[0]!.health_check).toEqual({ path: "/metrics", interval_ms: 1000, timeout_ms: 500, unhealthy_threshold: 2, healthy_threshold: 1 });
  });

  it("accepts the plugin configuration as a JSON string, keeping it verbatim, and an absolute wasm path", () => {
    const cfg = parseGatewayConfig(`${MINIMAL}\nplugin: { wasm: /opt/p.wasm, configuration: '{"a": 1}' }\n`, "/x");
    expect(cfg.plugin!.configuration).toBe('{"a": 1}');
    expect(cfg.plugin!.wasm).toBe("/opt/p.wasm");
  });

  it.each([
    ["an endpoint that is not ip:port", MINIMAL.replace('"10.0.0.1:80"', '"10.0.0.1:80", "x"'), "clusters[0].endpoints[1]: expected ip:port, got 'x'"],
    ["a hostname endpoint", MINIMAL.replace('"10.0.0.1:80"', '"vllm:80"'), "clusters[0].endpoints[0]: expected ip:port, got 'vllm:80'"],
    ["a port out of range", MINIMAL.replace('"10.0.0.1:80"', '"10.0.0.1:70000"'), "clusters[0].endpoints[0]: expected ip:port"],
    ["an unknown lb_policy", MINIMAL.replace("name: up", "name: up\n    lb_policy: maglev"), "clusters[0].lb_policy: expected one of round_robin | least_request | random, got 'maglev'"],
    ["an unknown cluster type", MINIMAL.replace("name: up", "name: up\n    type: eds"), "clusters[0].type: expected one of static | redis"],
    ["a negative timeout", MINIMAL.replace("name: up", "name: up\n    connect_timeout_ms: -1"), "clusters[0].connect_timeout_ms: expected an integer in [1,"],
    ["a zero health threshold", MINIMAL.replace('["10.0.0.1:80"]', '["10.0.0.1:80"]\n    health_check: { unhealthy_threshold: 0 }'), "clusters[0].health_check.unhealthy_threshold: expected an integer"],
    ["a duplicate cluster", `${MINIMAL}  - name: up\n    endpoints: ["10.0.0.2:80"]\n`, "clusters[1].name: expected a unique cluster name, got 'up'"],
    ["a route to an unknown cluster", `${MINIMAL}routes: [{ cluster: nope }]\n`, "routes[0].cluster: expected the name of a static cluster, got 'nope'"],
    ["a route without cluster", `${MINIMAL}routes: [{ name: r }]\n`, "routes[0].cluster: expected a string"],
    ["a plugin configuration that is not JSON", `${MINIMAL}plugin: { wasm: p.wasm, configuration: "{oops" }\n`, "plugin.configuration: expected a JSON document, got invalid JSON (at character 1); its text is not shown"],
    ["a plugin without wasm", `${MINIMAL}plugin: { root_id: x }\n`, "plugin.wasm: expected a string"],
    ["missing clusters", "listener: { port: 1 }\n", "gateway config.clusters: expected a list"],
    ["a bad workers count", `${MINIMAL}workers: 0\n`, "gateway config.workers: expected an integer in [1, 64], got 0"],
  ])("rejects %s with an error naming the key", (_name, text, message) => {
    expect(() => parseGatewayConfig(text, "/x")).toThrow(message);
  });

  it("accepts an original_dst cluster without endpoints (Envoy ORIGINAL_DST, use_http_header) and refuses endpoints on it", () => {
    const base = { listener: { port: 0 }, routes: [{ name: "r", cluster: "up" }] };
    const ok = parseGatewayConfig(stringify({ ...base, clusters: [{ name: "up", endpoints: ["127.0.0.1:1"] }, { name: "odst", type: "original_dst" }] }), "/");
    expect(ok.clusters[1].type).toBe("original_dst");
    expect(ok.clusters[1].endpoints).toEqual([]);
    expect(() => parseGatewayConfig(stringify({ ...base, clusters: [{ name: "up", endpoints: ["127.0.0.1:1"] }, { name: "odst", type: "original_dst", endpoints: ["127.0.0.1:2"] }] }), "/"))
      .toThrow(/clusters\[1\]\.endpoints/);
  });

  it("rejects a redis cluster as a route target", () => {
    const text = `clusters: [{ name: r, type: redis, endpoints: ["127.0.0.1:6379"] }]\nroutes: [{ cluster: r }]\n`;
    expect(() => parseGatewayConfig(text, "/x")).toThrow("routes[0].cluster: expected the name of a static cluster, got 'r'");
  });
});

describe("errors never print the plugin configuration", () => {
  const base = `clusters:\n  - name: a\n    endpoints: ["127.0.0.1:1"]\nplugin:\n  wasm: x.wasm\n`;
  it("invalid JSON in plugin.configuration: the position, not the text", () => {
    const text = base + `  configuration: '{"lb_config": {"password": "s3cr3t-pw"},}'\n`;
    expect(() => parseGatewayConfig(text, "/tmp")).toThrow(/^plugin\.configuration: expected a JSON document, got invalid JSON/);
    expect(() => parseGatewayConfig(text, "/tmp")).not.toThrow(/s3cr3t/);
  });
  it("invalid YAML: the line and column, not the yaml library's excerpt", () => {
    const text = base + `  configuration:\n    lb_config:\n      password: s3cr3t-pw\n     bad: 1\n`;
    expect(() => parseGatewayConfig(text, "/tmp")).toThrow(/^gateway config: invalid YAML: [A-Z_]+ at line 9, column \d+; the file's text is not shown$/);
  });
  it("the gateway CLI exits 1 naming the problem, without the password", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gw-cli-"));
    const file = path.join(dir, "gateway.yaml");
    fs.writeFileSync(file, base + `  configuration: '{"lb_config": {"password": "s3cr3t-pw"},}'\n`);
    const r = spawnSync(process.execPath, ["--import", "tsx", "host-test/cli/gateway.ts", "--config", file], { encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("plugin.configuration: expected a JSON document");
    expect(r.stderr + r.stdout).not.toContain("s3cr3t");
  });
});

describe("loadGatewayConfig", () => {
  it("resolves the wasm path against the YAML file's directory", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gw-config-"));
    try {
      const file = path.join(dir, "gateway.yaml");
      fs.writeFileSync(file, FULL);
      expect(loadGatewayConfig(file).plugin!.wasm).toBe(path.join(dir, "build/ai-load-balancer.wasm"));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("matchRoute", () => {
  const cfg = parseGatewayConfig(FULL, "/x");

  it("takes the first route whose prefix and domain match", () => {
    expect(matchRoute(cfg, "a.example.com", "/v1/chat/completions")?.name).toBe("llm-route");
    expect(matchRoute(cfg, "api.local:8080", "/v1/models")?.name).toBe("llm-route");
    expect(matchRoute(cfg, "a.example.com", "/health")?.name).toBe("fallback");
    expect(matchRoute(cfg, "other.host", "/v1/models")?.name).toBe("fallback");
  });

  it("matches wildcards like Envoy: suffix and prefix forms, never the empty string, case-insensitively", () => {
    const only = parseGatewayConfig(`${MINIMAL}routes: [{ name: w, cluster: up, match: { domains: ["*.example.com", "api.*"] } }]\n`, "/x");
    expect(matchRoute(only, "A.Example.COM", "/")?.name).toBe("w");
    expect(matchRoute(only, "x.y.example.com", "/")?.name).toBe("w");
    expect(matchRoute(only, "example.com", "/")).toBeNull();
    expect(matchRoute(only, ".example.com", "/")).toBeNull();
    expect(matchRoute(only, "api.internal", "/")?.name).toBe("w");
    expect(matchRoute(only, "api.", "/")).toBeNull();
  });

  it("returns null when nothing matches", () => {
    const only = parseGatewayConfig(`${MINIMAL}routes: [{ name: v1, cluster: up, match: { prefix: /v1/ } }]\n`, "/x");
    expect(matchRoute(only, "h", "/v2/x")).toBeNull();
  });
});
