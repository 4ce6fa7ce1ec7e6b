// Every YAML file under envoy/ is parsed and checked; a file (or a document kind) this test does
// not know fails it, so no deployment example goes untested:
// - WasmPlugin: every `config` (defaultConfig, matchRules[].config) is loaded into the real local
//   gateway (host-test/gateway, parsed by its config.ts) with the clusters it names, and the built
//   plugin must accept it on every VM; the Redis service it names must be registered by an
//   McpBridge in envoy/ (or be a Kubernetes Service), and its metricsCluster must be an
//   ORIGINAL_DST cluster added by an EnvoyFilter in envoy/.
// - EnvoyFilter: health checks are converted into the local gateway's health_check and parsed;
//   ORIGINAL_DST clusters must route by header; cluster_header routes must name a WasmPlugin route,
//   read the header it writes, and come with the early removal of that header from client requests.
// - WasmPlugin fields and enum values: those of Higress's CRD.
// - McpBridge: Higress's rules (name default, static domains are ip:port).
// - envoy/local/*.yaml: the local gateway's own configuration.
// Plus envoy/Dockerfile: the image layout Higress pulls, built from what `npm run build` writes.
import fs from "node:fs";
import path from "node:path";
import { stringify } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { loadGatewayConfig, parseGatewayConfig } from "../../host-test/gateway/config.js";
import { startGateway, type Gateway } from "../../host-test/gateway/server.js";
import { wasmPluginConfigs, yamlDocs, yamlFiles, type Obj } from "./doc-configs.js";

const ROOT = "envoy";
const WASM = path.resolve("build/ai-load-balancer.wasm");

const files = yamlFiles(ROOT);
const docs = yamlDocs(ROOT);
const ofKind = (kind: string) => docs.filter((d) => d.doc?.kind === kind);
const pluginConfigs = wasmPluginConfigs(ROOT);

/** Clusters the McpBridges in envoy/ register: outbound|<port>||<name>.<type>. */
const bridgeClusters = ofKind("McpBridge").flatMap(({ doc }) => (doc.spec.registries as Obj[]).map((r) => `outbound|${r.port}||${r.name}.${r.type}`));

/** ORIGINAL_DST clusters that EnvoyFilters in envoy/ add (by name). */
const originalDstClusters = ofKind("EnvoyFilter").flatMap(({ doc }) => (doc.spec.configPatches as Obj[])
  .filter((p) => p.applyTo === "CLUSTER" && p.patch.operation === "ADD" && p.patch.value.type === "ORIGINAL_DST")
  .map((p) => p.patch.value as Obj));

const durationMs = (v: string) => {
  const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(v);
  if (!m) throw new Error(`not an Envoy duration: ${v}`);
  return Math.round(Number(m[1]) * (m[2] === "s" ? 1000 : 1));
};

describe("envoy/ YAML", () => {
  it("has only kinds this test checks", () => {
    expect(files.length).toBeGreaterThanOrEqual(8);
    expect(docs.map((d) => `${d.file}: ${d.doc?.kind}`).filter((k) => !/: (WasmPlugin|EnvoyFilter|McpBridge)$/.test(k))).toEqual([]);
    expect(pluginConfigs.length).toBeGreaterThanOrEqual(3);
  });

  describe.each(pluginConfigs)("$where", ({ config }) => {
    const gateways: Gateway[] = [];
    afterAll(async () => { for (const g of gateways) await g.close(); });

    it("is accepted by the plugin in the local gateway, with the clusters it names", async () => {
      const lb = (config.lb_config ?? {}) as Obj;
      const clusters: Obj[] = [{ name: "outbound|8000||vllm.default.svc.cluster.local", type: "static", endpoints: ["127.0.0.1:9"] }];
      if (lb.serviceFQDN) {
        const redisCluster = `outbound|${lb.servicePort}||${lb.serviceFQDN}`;
        // A Kubernetes Service no route names gets no cluster under Higress's default
        // onlyPushRouteCluster: true, so Redis must come through the McpBridge (envoy/README.md).
        expect(bridgeClusters.includes(redisCluster),
          `${redisCluster} is registered by an McpBridge in envoy/ (${bridgeClusters.join(", ")})`).toBe(true);
        clusters.push({ name: redisCluster, type: "redis", endpoints: ["127.0.0.1:9"] });
      }
      if (lb.metricsSource === "poll") {
        const dst = originalDstClusters.find((c) => c.name === lb.metricsCluster);
        expect(dst, `metricsCluster ${lb.metricsCluster} is added by an EnvoyFilter in envoy/`).toBeDefined();
        clusters.push({ name: dst!.name, type: "original_dst" });
      }
      const cfg = parseGatewayConfig(stringify({
        listener: { port: 0 }, workers: 2, clusters,
        routes: [{ name: "default/vllm-route", cluster: clusters[0].name }],
        plugin: { wasm: WASM, log_level: "info", configuration: config },
      }), process.cwd());
      const rejected: string[] = [];
      const gw = await startGateway(cfg, { logEcho: (r) => { if (r.message.includes("invalid configuration")) rejected.push(r.message); } });
      gateways.push(gw);
      expect(rejected).toEqual([]);
      expect(gw.plugin!.configured).toEqual([true, true]);
    });
  });

  // Higress's WasmPlugin CRD (alibaba/higress api/extensions/v1alpha1/wasmplugin.proto, fields in
  // their JSON names; helm/core/crds/customresourcedefinitions.gen.yaml): `spec` is a structural
  // schema, so a misspelt field (`failstrategy`, `matchRule`) is pruned (or refused by kubectl's
  // strict field validation) and an enum value outside the CRD's is refused by the API server.
  it("WasmPlugins use only the fields and enum values of Higress's WasmPlugin CRD", () => {
    const SPEC = ["url", "sha256", "imagePullPolicy", "imagePullSecret", "verificationKey", "pluginConfig", "pluginName",
      "phase", "priority", "failStrategy", "vmConfig", "defaultConfig", "matchRules", "defaultConfigDisable"];
    const RULE = ["ingress", "domain", "config", "configDisable", "service", "routeType"];
    const ENUMS: Record<string, string[]> = {
      phase: ["UNSPECIFIED_PHASE", "AUTHN", "AUTHZ", "STATS"],
      imagePullPolicy: ["UNSPECIFIED_POLICY", "IfNotPresent", "Always"],
      failStrategy: ["FAIL_CLOSE", "FAIL_OPEN"],
    };
    const plugins = ofKind("WasmPlugin");
    expect(plugins.length).toBeGreaterThan(0);
    for (const { file, doc } of plugins) {
      expect(doc.apiVersion, file).toBe("extensions.higress.io/v1alpha1");
      expect(doc.metadata.namespace, `${file}: Higress reads WasmPlugins in its own namespace`).toBe("higress-system");
      const spec = doc.spec as Obj;
      expect(Object.keys(spec).filter((k) => !SPEC.includes(k)), file).toEqual([]);
      for (const [k, values] of Object.entries(ENUMS)) if (spec[k] !== undefined) expect(values, `${file}: ${k}`).toContain(spec[k]);
      // A load balancer falls back to the route's own balancing; FAIL_CLOSE (the default) 5xx's every request.
      expect(spec.failStrategy, file).toBe("FAIL_OPEN");
      if (spec.priority !== undefined) expect(Number.isInteger(spec.priority) && Math.abs(spec.priority) < 2 ** 31, `${file}: priority is an int32`).toBe(true);
      expect(spec.url, file).toMatch(/^(oci|https?|file):\/\/\S+$/);
      for (const [i, r] of ((spec.matchRules ?? []) as Obj[]).entries()) {
        expect(Object.keys(r).filter((k) => !RULE.includes(k)), `${file} matchRules[${i}]`).toEqual([]);
        expect(["ingress", "domain", "service"].some((k) => Array.isArray(r[k]) && r[k].length > 0), `${file} matchRules[${i}] matches something`).toBe(true);
      }
    }
  });

  /** Request headers the EnvoyFilters in envoy/ remove before routing (HCM early header mutation), lower-cased. */
  const earlyRemoved = ofKind("EnvoyFilter").flatMap(({ doc }) => (doc.spec.configPatches as Obj[])
    .filter((p) => p.applyTo === "NETWORK_FILTER")
    .flatMap((p) => (p.patch.value?.typed_config?.early_header_mutation_extensions ?? []) as Obj[])
    .flatMap((e) => (e.typed_config?.mutations ?? []) as Obj[])
    .filter((m) => typeof m.remove === "string")
    .map((m) => (m.remove as string).toLowerCase()));

  it("EnvoyFilters: health checks load as local gateway health checks on /metrics; ORIGINAL_DST clusters route by header; cluster_header routes are WasmPlugin routes", () => {
    const routes = new Set(pluginConfigs.flatMap((p) => p.routes));
    let checked = 0;
    for (const { file, doc } of ofKind("EnvoyFilter")) {
      for (const p of doc.spec.configPatches as Obj[]) {
        const v = p.patch.value as Obj;
        if (p.applyTo === "CLUSTER" && p.patch.operation === "MERGE" && v.health_checks) {
          const name = p.match.cluster.name as string;
          expect(name, file).toMatch(/^outbound\|\d+\|\|[a-z0-9.-]+$/);
          for (const hc of v.health_checks as Obj[]) {
            // Higress keeps the body of a health check as the host's metrics only for /metrics.
            expect(hc.http_health_check.path, file).toBe("/metrics");
            const cfg = parseGatewayConfig(stringify({
              clusters: [{ name, type: "static", endpoints: ["127.0.0.1:9"], health_check: {
                path: hc.http_health_check.path, interval_ms: durationMs(hc.interval), timeout_ms: durationMs(hc.timeout),
                unhealthy_threshold: hc.unhealthy_threshold, healthy_threshold: hc.healthy_threshold } }],
              routes: [{ cluster: name }],
            }), process.cwd());
            expect(cfg.clusters[0].health_check!.timeout_ms).toBeLessThanOrEqual(cfg.clusters[0].health_check!.interval_ms);
            checked++;
          }
        } else if (p.applyTo === "CLUSTER" && p.patch.operation === "ADD") {
          expect(v.type, file).toBe("ORIGINAL_DST");
          expect(v.lb_policy, file).toBe("CLUSTER_PROVIDED");
          expect(v.original_dst_lb_config?.use_http_header, `${file}: the plugin names each pod in x-envoy-original-dst-host`).toBe(true);
          const cfg = parseGatewayConfig(stringify({ clusters: [{ name: "model", endpoints: ["127.0.0.1:9"] }, { name: v.name, type: "original_dst" }], routes: [{ cluster: "model" }] }), process.cwd());
          expect(cfg.clusters[1].type).toBe("original_dst");
          checked++;
        } else if (p.applyTo === "HTTP_ROUTE") {
          const route = p.match.routeConfiguration.vhost.route.name as string;
          expect(routes.has(route), `${file}: route is one a WasmPlugin in envoy/ matches`).toBe(true);
          // Envoy lower-cases both names (RouteEntryImplBase cluster_header_name_ and the Wasm
          // header calls are Http::LowerCaseString): the route must read the header the plugin writes.
          for (const c of pluginConfigs.filter((pc) => pc.routes.includes(route))) {
            expect(c.config.lb_type, `${c.where}: a cluster_header route needs an lb_type: cluster policy`).toBe("cluster");
            const written = String((c.config.lb_config ?? {}).cluster_header || "x-higress-target-cluster").toLowerCase();
            expect(String(v.route.cluster_header).toLowerCase(), `${file}: the header ${c.where} writes`).toBe(written);
          }
          // The header is untrusted input (RouteAction.cluster_header docs): while the plugin is not
          // running (FAIL_OPEN after a fetch or VM failure) a client's own value would pick any
          // cluster of the gateway. The HCM's early header mutation removes it before the route is
          // first resolved and before any filter (envoy-1.27 conn_manager_utility.cc
          // mutateRequestHeaders, called ahead of refreshCachedRoute in conn_manager_impl.cc).
          expect(earlyRemoved, `${file}: ${v.route.cluster_header} is removed from client requests by an early header mutation`)
            .toContain(String(v.route.cluster_header).toLowerCase());
          checked++;
        } else if (p.applyTo === "NETWORK_FILTER" && p.patch.operation === "MERGE" && v.typed_config?.early_header_mutation_extensions) {
          expect(p.match.listener.filterChain.filter.name, file).toBe("envoy.filters.network.http_connection_manager");
          expect(v.typed_config["@type"], file).toBe("type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager");
          for (const e of v.typed_config.early_header_mutation_extensions as Obj[]) {
            expect(e.name, file).toBe("envoy.http.early_header_mutation.header_mutation");
            expect(e.typed_config["@type"], file).toBe("type.googleapis.com/envoy.extensions.http.early_header_mutation.header_mutation.v3.HeaderMutation");
          }
          checked++;
        } else {
          throw new Error(`${file}: patch ${p.applyTo}/${p.patch.operation} is not checked by this test`);
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(3);
  });

  it("McpBridges follow Higress's rules (only `default` in higress-system is read; static domains are ip:port)", () => {
    expect(ofKind("McpBridge").length).toBeGreaterThan(0);
    for (const { file, doc } of ofKind("McpBridge")) {
      expect(doc.metadata, file).toMatchObject({ name: "default", namespace: "higress-system" });
      for (const r of doc.spec.registries as Obj[]) {
        expect(["static", "dns"]).toContain(r.type);
        expect(Number.isInteger(r.port) && r.port > 0, `${file}: port`).toBe(true);
        if (r.type === "static") for (const ep of String(r.domain).split(",")) expect(ep, file).toMatch(/^\d+\.\d+\.\d+\.\d+:\d+$/);
      }
    }
  });

  it("envoy/local/ files are valid local gateway configurations the plugin accepts", async () => {
    const local = files.filter((f) => f.startsWith(path.join(ROOT, "local")));
    expect(local.length).toBeGreaterThan(0);
    for (const f of local) {
      const cfg = loadGatewayConfig(f);
      const gw = await startGateway({ ...cfg, listener: { ...cfg.listener, port: 0 }, admin: null });
      try {
        expect(gw.plugin!.configured.every(Boolean), f).toBe(true);
      } finally {
        await gw.close();
      }
    }
  });
});

describe("envoy/Dockerfile", () => {
  it("is the image Higress pulls (scratch, /plugin.wasm) built from npm run build's output, as envoy/README.md runs it", () => {
    const lines = fs.readFileSync("envoy/Dockerfile", "utf8").split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"));
    expect(lines).toEqual(["FROM scratch", "COPY ai-load-balancer.wasm /plugin.wasm"]);
    expect(fs.existsSync("build/ai-load-balancer.wasm")).toBe(true);
    expect(fs.readFileSync("envoy/README.md", "utf8")).toMatch(/docker build -f envoy\/Dockerfile -t \S+ build\n/);
  });
});
