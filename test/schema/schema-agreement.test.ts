// envoy/ai-load-balancer.schema.json agrees with the plugin's own validation (the release .wasm's
// proxy_on_configure, the one source of truth). Data-driven, so new keys or rules in the plugin
// show up as disagreements instead of silently drifting:
// - every configuration the documentation shows (README, envoy/, npm start's and the benchmarks'
//   configurations) must be accepted by both;
// - cases generated from the schema itself, for every lb_config key, at the top level and inside a
//   `_rules_` entry: each bound and enum value, just outside each bound, a wrong type, an unknown key;
// - the cross-key cases of CROSS_KEY_CASES (requirements that depend on other keys).
// For each case the schema (ajv) and the plugin must both accept or both refuse.
import fs from "node:fs";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { TestHost } from "../../host-test/facade/index.js";
import { START_POLICIES, startPluginConfig, type StartPolicy } from "../../host-test/cli/policies.js";
import { POLICIES } from "../../bench/policies.js";
import { localGatewayConfigs, readmeConfigs, wasmPluginConfigs, type Obj } from "../deploy/doc-configs.js";

const schema = JSON.parse(fs.readFileSync("envoy/ai-load-balancer.schema.json", "utf8"));
const validate = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictRequired: false }).compile(schema);
const wasm = fs.readFileSync("build/ai-load-balancer.wasm");

interface Verdict { ok: boolean; why: string }

function bySchema(config: unknown): Verdict {
  const ok = validate(config) as boolean;
  return { ok, why: ok ? "" : JSON.stringify(validate.errors?.slice(0, 3)) };
}

/**
 * The Redis clusters a configuration names (`outbound|<servicePort>||<serviceFQDN>`, Higress's
 * cluster naming), at any depth: they exist, as in a gateway set up for the configuration (Envoy's
 * redis_init on a cluster that does not exist is BadArgument and the plugin warns).
 */
function redisClustersOf(config: unknown, out: string[] = []): string[] {
  if (Array.isArray(config)) for (const v of config) redisClustersOf(v, out);
  else if (config !== null && typeof config === "object") {
    const o = config as Obj;
    if (typeof o.serviceFQDN === "string" && typeof o.servicePort === "number") out.push(`outbound|${o.servicePort}||${o.serviceFQDN}`);
    for (const v of Object.values(o)) redisClustersOf(v, out);
  }
  return out;
}

async function byPlugin(config: unknown): Promise<Verdict> {
  const h = await TestHost.create({ wasm, configuration: config as object, logLevel: "warn", redisClusters: redisClustersOf(config) });
  try {
    const ok = h.configured.every(Boolean);
    return { ok, why: h.logs("warn").map((r) => r.message).join("; ") };
  } finally {
    h.close();
  }
}

interface Case { name: string; config: Obj }

/** Strings and lists of strings that are names, hosts, paths or free text: every one is a probe
 *  for every string (list) key, so a pattern the plugin applies and the schema lacks (or the other
 *  way round) shows as a disagreement. */
const TEXTS = ["", "a b", "a\r\nb", "{x}", "x:y", "h:0", "a..b:80", "[1:2]:80", "[::1]:80", "10.0.0.1:65535", "x".repeat(300)];

/** Values just inside and just outside what the schema allows for one property. The forms the
 *  plugin alone accepts (numbers and booleans as strings, "" for a default) are not probed here:
 *  "the plugin accepts the forms Higress's gjson reads" below checks them one way. */
function probes(spec: Obj): { valid: unknown[]; invalid: unknown[] } {
  if (spec.enum) return { valid: spec.enum, invalid: ["not-one-of-them", 1] };
  const min = spec.minimum ?? spec.exclusiveMinimum;
  switch (spec.type) {
    case "integer": return {
      valid: [spec.minimum, spec.maximum, spec.default].filter((v) => v !== undefined),
      invalid: [min - 1, spec.maximum + 1, min + 0.5, "x", true],
    };
    case "number": return {
      valid: [spec.minimum, spec.maximum, (min + spec.maximum) / 2].filter((v) => v !== undefined),
      invalid: [min - Math.max(min / 2, 0.5), spec.maximum + 1, "x", false, ...(spec.exclusiveMinimum !== undefined ? [min] : [])],
    };
    case "boolean": return { valid: [true, false], invalid: ["yes", 2] };
    case "string": return { valid: ["abc"], invalid: [5, ["abc"], ...TEXTS] };
    case "array": return { valid: [[], ["a", "b"]], invalid: ["a", [1], ...TEXTS.map((t) => [t])] };
    default: return { valid: ["anything", 5], invalid: [] };
  }
}

/** For each lb_config definition, a configuration whose validation reads every key of it (Redis
 *  keys are read only when Redis is used). */
const BASES: Record<string, Obj> = {
  endpointConfig: { lb_policy: "global_least_request", lb_config: { serviceFQDN: "redis.static", servicePort: 6379 } },
  clusterMetricsConfig: { lb_type: "cluster", lb_policy: "cluster_metrics", lb_config: { service_list: ["outbound|80||a.dns"] } },
  clusterHashConfig: { lb_type: "cluster", lb_policy: "cluster_hash", lb_config: { clusters: [{ cluster: "outbound|80||a.dns", weight: 100 }] } },
};
const BASE = BASES.endpointConfig as { lb_policy: string; lb_config: Obj };

function withKey(base: Obj, key: string, v: unknown): Obj {
  return { ...base, lb_config: { ...(base.lb_config as Obj), [key]: v } };
}

function generatedCases(): Case[] {
  const cases: Case[] = [];
  for (const [def, base] of Object.entries(BASES)) {
    const props = schema.definitions[def].properties as Record<string, Obj>;
    for (const [key, spec] of Object.entries(props)) {
      const { valid, invalid } = probes(spec);
      for (const v of [...valid, ...invalid]) cases.push({ name: `${base.lb_policy} lb_config.${key} = ${JSON.stringify(v)}`, config: withKey(base, key, v) });
    }
    cases.push({ name: `${base.lb_policy} unknown lb_config key`, config: withKey(base, "notAKey", 1) });
  }
  for (const p of schema.definitions.lbPolicy.enum as string[]) cases.push({ name: `lb_policy ${p} without lb_config`, config: { lb_policy: p } });
  return cases;
}

/** Requirements that depend on other keys, as data: extend it when the plugin gains one. */
const CROSS_KEY_CASES: Case[] = [
  { name: "empty configuration", config: {} },
  { name: "unknown top-level key", config: { lb_policy: "header", extra: 1 } },
  { name: "lb_config without lb_policy", config: { lb_config: { debugHeader: "x" } } },
  { name: "prefix_cache without Redis", config: { lb_policy: "prefix_cache", lb_config: {} } },
  { name: "Redis with port 0", config: { lb_policy: "global_least_request", lb_config: { serviceFQDN: "redis.static", servicePort: 0 } } },
  { name: "Redis with an empty FQDN", config: { lb_policy: "global_least_request", lb_config: { serviceFQDN: "", servicePort: 6379 } } },
  { name: "endpoint_metrics without Redis", config: { lb_policy: "endpoint_metrics" } },
  { name: "endpoint_metrics with an FQDN but no port", config: { lb_policy: "endpoint_metrics", lb_config: { serviceFQDN: "redis.static" } } },
  { name: "poll without metricsCluster", config: { lb_policy: "endpoint_metrics", lb_config: { metricsSource: "poll" } } },
  { name: "poll with metricsCluster", config: { lb_policy: "endpoint_metrics", lb_config: { metricsSource: "poll", metricsCluster: "dst" } } },
  { name: "least without target_metric", config: { lb_policy: "endpoint_metrics", lb_config: { metric_policy: "least" } } },
  { name: "most with target_metric", config: { lb_policy: "endpoint_metrics", lb_config: { metric_policy: "most", target_metric: "vllm:num_requests_running" } } },
  { name: "compat with orderSensitive", config: { ...BASE, lb_policy: "prefix_cache", lb_config: { ...BASE.lb_config, compat: true, orderSensitive: true } } },
  { name: "compat with blockBoundary message", config: { ...BASE, lb_policy: "prefix_cache", lb_config: { ...BASE.lb_config, compat: true, blockBoundary: "message" } } },
  { name: "compat with blockBoundary user", config: { ...BASE, lb_policy: "prefix_cache", lb_config: { ...BASE.lb_config, compat: true, blockBoundary: "user" } } },
  { name: "lb_type cluster with global_least_request", config: { ...BASE, lb_type: "cluster" } },
  { name: "lb_type cluster with cluster_metrics", config: { lb_type: "cluster", lb_policy: "cluster_metrics", lb_config: { mode: "LeastBusy", service_list: ["outbound|80||a.dns"] } } },
  { name: "cluster_metrics with an endpoint key", config: { lb_type: "cluster", lb_policy: "cluster_metrics", lb_config: { maxRequestCount: 3 } } },
  { name: "cluster_metrics with other Higress policies' keys (ignored)", config: { lb_type: "cluster", lb_policy: "cluster_metrics", lb_config: { service_list: ["outbound|80||a.dns"], maxRequestCount: 3, hash_header: "x", clusters: 5 } } },
  { name: "cluster_metrics with leaseTTL (not a Higress key)", config: { lb_type: "cluster", lb_policy: "cluster_metrics", lb_config: { service_list: ["outbound|80||a.dns"], leaseTTL: 30 } } },
  { name: "cluster_hash with other Higress policies' keys (ignored)", config: { lb_type: "cluster", lb_policy: "cluster_hash", lb_config: { clusters: [{ cluster: "outbound|80||a.dns", weight: 100 }], redisKeyTTL: 5, mode: "LeastBusy", password: 12345 } } },
  { name: "cluster_metrics with cluster_header not a header name", config: { lb_type: "cluster", lb_policy: "cluster_metrics", lb_config: { service_list: ["outbound|80||a.dns"], cluster_header: "x target" } } },
  { name: "cluster_metrics with an upper-case cluster_header", config: { lb_type: "cluster", lb_policy: "cluster_metrics", lb_config: { service_list: ["outbound|80||a.dns"], cluster_header: "X-Target" } } },
  { name: "cluster_hash with cluster_header not a header name", config: { lb_type: "cluster", lb_policy: "cluster_hash", lb_config: { clusters: [{ cluster: "outbound|80||a.dns", weight: 100 }], cluster_header: "x-c:" } } },
  { name: "cluster_hash with hash_header not a header name", config: { lb_type: "cluster", lb_policy: "cluster_hash", lb_config: { clusters: [{ cluster: "outbound|80||a.dns", weight: 100 }], hash_header: "x user" } } },
  { name: "cluster_metrics with a control character in a service name", config: { lb_type: "cluster", lb_policy: "cluster_metrics", lb_config: { service_list: ["outbound|80||a.dns", "b\r\nx: 1"] } } },
  { name: "cluster_hash with a control character in a cluster name", config: { lb_type: "cluster", lb_policy: "cluster_hash", lb_config: { clusters: [{ cluster: "a\tb", weight: 100 }] } } },
  { name: "cluster_hash with empty header names (the defaults)", config: { lb_type: "cluster", lb_policy: "cluster_hash", lb_config: { clusters: [{ cluster: "outbound|80||a.dns", weight: 100 }], hash_header: "", cluster_header: "" } } },
  { name: "cluster_metrics with pickDeadlineMs", config: { lb_type: "cluster", lb_policy: "cluster_metrics", lb_config: { service_list: ["outbound|80||a.dns"], pickDeadlineMs: 500 } } },
  { name: "cluster_metrics with pickDeadlineMs 0", config: { lb_type: "cluster", lb_policy: "cluster_metrics", lb_config: { service_list: ["outbound|80||a.dns"], pickDeadlineMs: 0 } } },
  { name: "cluster_hash with pickDeadlineMs", config: { lb_type: "cluster", lb_policy: "cluster_hash", lb_config: { clusters: [{ name: "outbound|80||a.dns", weight: 1 }], pickDeadlineMs: 500 } } },
  { name: "lb_config not an object", config: { lb_policy: "header", lb_config: 5 } },
  { name: "_rules_ not a list", config: { _rules_: {} } },
  { name: "rule without a match", config: { _rules_: [{ lb_policy: "header" }] } },
  { name: "rule with empty match lists", config: { _rules_: [{ _match_route_: [], lb_policy: "header" }] } },
  { name: "rule without lb_policy (plugin off there)", config: { ...BASE, _rules_: [{ _match_domain_: ["*.example.com"] }] } },
  { name: "rule with lb_config but no lb_policy", config: { _rules_: [{ _match_route_: ["r"], lb_config: { debugHeader: "x" } }] } },
  { name: "rule with an unknown key", config: { _rules_: [{ _match_route_: ["r"], lb_policy: "header", _match_path_: ["/"] }] } },
  { name: "rule match list with a number", config: { _rules_: [{ _match_service_: [5], lb_policy: "header" }] } },
  { name: "rule by route prefix", config: { _rules_: [{ _match_route_prefix_: ["llm-"], lb_policy: "header" }] } },
  { name: "rule whose only route is \"\" (dropped: no matcher left)", config: { _rules_: [{ _match_route_: [""], lb_policy: "header" }] } },
  { name: "rule whose only service is \"\"", config: { _rules_: [{ _match_service_: [""], lb_policy: "header" }] } },
  { name: "rule whose only route prefix is \"\"", config: { _rules_: [{ _match_route_prefix_: [""], lb_policy: "header" }] } },
  { name: "rule with \"\" and a route", config: { _rules_: [{ _match_route_: ["", "r"], lb_policy: "header" }] } },
  { name: "rule whose only domain is \"\" (kept: matches an empty authority)", config: { _rules_: [{ _match_domain_: [""], lb_policy: "header" }] } },
  { name: "_plugin_id_ at the top level", config: { _plugin_id_: "p1", lb_policy: "header" } },
  { name: "cluster_hash entry with a CR/LF in its cluster", config: { lb_type: "cluster", lb_policy: "cluster_hash", lb_config: { clusters: [{ cluster: "a\r\nb", weight: 100 }] } } },
  { name: "cluster_metrics global in-flight with a bad serviceFQDN", config: { lb_type: "cluster", lb_policy: "cluster_metrics", lb_config: { service_list: ["a"], global_inflight_enabled: true, serviceFQDN: "redis static", servicePort: 6379 } } },
  { name: "cluster_metrics global in-flight with a good serviceFQDN", config: { lb_type: "cluster", lb_policy: "cluster_metrics", lb_config: { service_list: ["a"], global_inflight_enabled: true, serviceFQDN: "redis.static", servicePort: 6379 } } },
  { name: "rule: prefix_cache without Redis", config: { _rules_: [{ _match_route_: ["r"], lb_policy: "prefix_cache" }] } },
  { name: "sloHoldMs without modelBatchSlots", config: { ...BASE, lb_policy: "predicted_latency", lb_config: { ...BASE.lb_config, sloHoldMs: 2000 } } },
  { name: "sloHoldMs with modelBatchSlots", config: { ...BASE, lb_policy: "predicted_latency", lb_config: { ...BASE.lb_config, sloHoldMs: 2000, modelBatchSlots: 4 } } },
  { name: "sloHoldMs 0 without modelBatchSlots", config: { ...BASE, lb_policy: "predicted_latency", lb_config: { ...BASE.lb_config, sloHoldMs: 0 } } },
  { name: "sloHoldMax 0", config: { ...BASE, lb_policy: "predicted_latency", lb_config: { ...BASE.lb_config, sloHoldMs: 2000, modelBatchSlots: 4, sloHoldMax: 0 } } },
  { name: "sloHoldMax 64", config: { ...BASE, lb_policy: "predicted_latency", lb_config: { ...BASE.lb_config, sloHoldMs: 2000, modelBatchSlots: 4, sloHoldMax: 64 } } },
  { name: "sloShareReplicasMs 3 (0 or at least 5)", config: { ...BASE, lb_policy: "predicted_latency", lb_config: { ...BASE.lb_config, sloShareReplicasMs: 3 } } },
  { name: "sloShareReplicasMs 20", config: { ...BASE, lb_policy: "predicted_latency", lb_config: { ...BASE.lb_config, sloShareReplicasMs: 20 } } },
  { name: "sloShareReplicasMs 20 without sloShareWorkers", config: { ...BASE, lb_policy: "predicted_latency", lb_config: { ...BASE.lb_config, sloShareReplicasMs: 20, sloShareWorkers: false } } },
  { name: "sloShareReplicasMs 0 without sloShareWorkers", config: { ...BASE, lb_policy: "predicted_latency", lb_config: { ...BASE.lb_config, sloShareReplicasMs: 0, sloShareWorkers: false } } },
];

function documentedConfigs(): Case[] {
  const docs = [...readmeConfigs(), ...wasmPluginConfigs(), ...localGatewayConfigs()].map((d) => ({ name: d.where, config: d.config }));
  const start = (Object.keys(START_POLICIES) as StartPolicy[]).map((p) => ({ name: `npm start --policy ${p}`, config: startPluginConfig(p, 6379, { enableDetailLog: true }) }));
  const bench = Object.entries(POLICIES).flatMap(([name, p]) => (p.kind === "gateway" && p.plugin ? [{ name: `bench policy ${name}`, config: p.plugin(6379) }] : []));
  return [...docs, ...start, ...bench];
}

describe("JSON Schema and the plugin's validation agree", () => {
  it("on every configuration the documentation, npm start and the benchmarks use (all accepted)", async () => {
    const cases = documentedConfigs();
    expect(cases.length).toBeGreaterThanOrEqual(12);
    for (const c of cases) {
      const [s, p] = [bySchema(c.config), await byPlugin(c.config)];
      expect({ case: c.name, schema: s.ok, plugin: p.ok, why: s.why + p.why }).toEqual({ case: c.name, schema: true, plugin: true, why: "" });
    }
  });

  it("on cases generated from the schema, at the top level and inside _rules_, and on the cross-key cases", async () => {
    const top = [...generatedCases(), ...CROSS_KEY_CASES];
    const inRule = generatedCases().map((c) => ({ name: `_rules_[0] ${c.name}`, config: { _rules_: [{ _match_route_: ["r"], ...c.config }] } }));
    const disagreements: string[] = [];
    let accepted = 0;
    let refused = 0;
    for (const c of [...top, ...inRule]) {
      const [s, p] = [bySchema(c.config), await byPlugin(c.config)];
      if (s.ok !== p.ok) disagreements.push(`${c.name}: schema ${s.ok ? "accepts" : "refuses"} ${s.why}, plugin ${p.ok ? "accepts" : "refuses"} ${p.why}`);
      if (p.ok) accepted++;
      else refused++;
    }
    expect(disagreements).toEqual([]);
    // Both outcomes are exercised in numbers (a schema that accepts or refuses everything fails above).
    expect(accepted).toBeGreaterThan(200);
    expect(refused).toBeGreaterThan(200);
  }, 240_000);

  it("the plugin accepts the forms Higress's gjson reads that the schema leaves out (numbers and booleans as strings, \"\" for a default)", async () => {
    const refused: string[] = [];
    let tried = 0;
    for (const [def, base] of Object.entries(BASES)) {
      for (const [key, spec] of Object.entries(schema.definitions[def].properties as Record<string, Obj>)) {
        const forms: unknown[] = [];
        if (spec.type === "integer" && spec.default !== undefined) forms.push(String(spec.default), "");
        if (spec.type === "number" && spec.default !== undefined) forms.push(String(spec.default), "");
        if (spec.type === "boolean") forms.push(String(spec.default), String(spec.default).toUpperCase(), spec.default ? 1 : 0, "");
        if (spec.enum && spec.default !== undefined) forms.push("");
        for (const v of forms) {
          tried++;
          const p = await byPlugin(withKey(base, key, v));
          if (!p.ok) refused.push(`${def}.${key} = ${JSON.stringify(v)}: ${p.why}`);
          if (bySchema(withKey(base, key, v)).ok) refused.push(`${def}.${key} = ${JSON.stringify(v)}: the schema accepts it (drop it from this test)`);
        }
      }
    }
    expect(refused).toEqual([]);
    expect(tried).toBeGreaterThan(150);
  }, 120_000);
});

it("documents the same keys as README's configuration tables (a key added to one must be added to the other)", () => {
  const readme = fs.readFileSync("README.md", "utf8");
  const section = readme.slice(readme.indexOf("## Configuration"), readme.indexOf("\n## ", readme.indexOf("## Configuration") + 5));
  // Key tables only (header "| key | default | meaning |"): other tables in the section (the
  // Higress comparison) name policies and foreign keys in their first column, not our keys.
  const documented = new Set<string>();
  let inKeyTable = false;
  for (const line of section.split("\n")) {
    if (!line.startsWith("|")) { inKeyTable = false; continue; }
    if (/^\| key \|/.test(line)) { inKeyTable = true; continue; }
    if (!inKeyTable) continue;
    const first = /^\| ([^|]+) \|/.exec(line)?.[1] ?? "";
    for (const m of first.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)`/g)) documented.add(m[1]);
  }
  expect(documented.size).toBeGreaterThan(40);
  const defs = schema.definitions;
  // Keys accepted only for compatibility and ignored carry no type in the schema and no README row
  // (per definition: a key ignored by one policy is typed where another policy reads it).
  const typed = [defs.endpointConfig, defs.clusterMetricsConfig, defs.clusterHashConfig]
    .flatMap((d) => Object.entries(d.properties as Record<string, Obj>).filter(([, v]) => v.type).map(([k]) => k));
  const inSchema = new Set([...Object.keys(schema.properties), ...typed]);
  expect([...documented].filter((k) => !inSchema.has(k)).sort(), "in README, missing from the schema").toEqual([]);
  expect([...inSchema].filter((k) => !documented.has(k) && k !== "_rules_" && k !== "lb_config" && k !== "_plugin_id_").sort(), "in the schema, missing from README").toEqual([]);
});

