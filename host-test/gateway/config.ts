// The gateway's YAML file: a trimmed Envoy config (listener, admin, clusters, routes) plus the
// Higress WasmPlugin that runs on the routes. Inputs: YAML text (or a path) and the directory
// relative paths resolve against. Output: a fully defaulted GatewayConfig.
// Failure behaviour: throws an Error naming the offending key, e.g.
// "clusters[1].endpoints[0]: expected ip:port, got 'x'" (this runs at startup, never per request).
// Defaults follow Envoy where Envoy has one (each cited below).
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { parse as parseYaml, YAMLError } from "yaml";
import type { LbPolicy } from "./local-lb.js";

export interface ListenerConfig { host: string; port: number }

export interface HealthCheckConfig {
  path: string;
  interval_ms: number;
  timeout_ms: number;
  unhealthy_threshold: number;
  healthy_threshold: number;
}

export interface ClusterConfig {
  name: string;
  /** static: HTTP upstreams; redis: target of proxy_redis_call; original_dst: Envoy's ORIGINAL_DST
   *  cluster with use_http_header (the host is named per request in x-envoy-original-dst-host;
   *  no endpoints), what endpoint_metrics polls each pod through. */
  type: "static" | "redis" | "original_dst";
  lb_policy: LbPolicy;
  connect_timeout_ms: number;
  /** "ip:port" strings, in file order. */
  endpoints: string[];
  health_check: HealthCheckConfig | null;
}

export interface RouteConfig {
  name: string;
  match: { prefix: string; domains: string[] };
  /** The route's fixed cluster; "" when the route names its cluster in a header (cluster_header). */
  cluster: string;
  /** Envoy RouteAction.cluster_header (lowercased): the cluster is the first value of this request
   *  header, read each time the route is resolved (see cluster-header.ts); null for a fixed cluster. */
  cluster_header: string | null;
  /** Envoy RouteAction.cluster_not_found_response_code: 503 (default), 404 or 500. */
  cluster_not_found_response_code: number;
  timeout_ms: number;
  /** Whether the wasm filter runs on this route. */
  plugin: boolean;
}

export interface PluginConfig {
  /** Absolute path of the .wasm module. */
  wasm: string;
  root_id: string;
  vm_config: string;
  log_level: "trace" | "debug" | "info" | "warn" | "error" | "critical";
  /** The plugin configuration as a JSON string, as Higress delivers it (PluginConfiguration buffer). */
  configuration: string;
}

export interface GatewayConfig {
  listener: ListenerConfig;
  /** null when the file has no `admin` section (no admin server). */
  admin: ListenerConfig | null;
  /** Wasm VMs per gateway (Envoy runs one VM per worker thread). */
  workers: number;
  clusters: ClusterConfig[];
  routes: RouteConfig[];
  /** null when the file has no `plugin` section (routes then run without the filter). */
  plugin: PluginConfig | null;
}

// Envoy Cluster.connect_timeout: "If not set, a default value of 5s will be used."
const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
// Envoy RouteAction.timeout: "If not specified, the default is 15s."
const DEFAULT_ROUTE_TIMEOUT_MS = 15000;
// Envoy requires these HealthCheck fields; the values below are this project's defaults.
const DEFAULT_HEALTH_CHECK: HealthCheckConfig = {
  path: "/metrics",
  interval_ms: 1000,
  timeout_ms: 500,
  unhealthy_threshold: 2,
  healthy_threshold: 1,
};
// Envoy RouteAction.ClusterNotFoundResponseCode: SERVICE_UNAVAILABLE (default), NOT_FOUND, INTERNAL_SERVER_ERROR.
const CLUSTER_NOT_FOUND_CODES = [503, 404, 500] as const;
const LB_POLICIES: readonly LbPolicy[] = ["round_robin", "least_request", "random"];
const CLUSTER_TYPES = ["static", "redis", "original_dst"] as const;
const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "critical"] as const;

type Obj = Record<string, unknown>;

function show(value: unknown): string {
  return typeof value === "string" ? `'${value}'` : JSON.stringify(value) ?? String(value);
}

function fail(key: string, expected: string, got: unknown): never {
  throw new Error(`${key}: expected ${expected}, got ${show(got)}`);
}

function objectAt(value: unknown, key: string): Obj {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(key, "a mapping", value);
  return value as Obj;
}

function optionalObject(parent: Obj, field: string, key: string): Obj | undefined {
  return parent[field] === undefined || parent[field] === null ? undefined : objectAt(parent[field], key);
}

function stringField(o: Obj, field: string, key: string, fallback?: string): string {
  const v = o[field];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== "string") fail(`${key}.${field}`, "a string", v);
  return v;
}

function intField(o: Obj, field: string, key: string, fallback: number | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = o[field];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    fail(`${key}.${field}`, `an integer in [${min}, ${max}]`, v);
  }
  return v;
}

function boolField(o: Obj, field: string, key: string, fallback: boolean): boolean {
  const v = o[field];
  if (v === undefined) return fallback;
  if (typeof v !== "boolean") fail(`${key}.${field}`, "true or false", v);
  return v;
}

function oneOf<T extends string>(o: Obj, field: string, key: string, allowed: readonly T[], fallback: T): T {
  const v = o[field];
  if (v === undefined) return fallback;
  if (!allowed.includes(v as T)) fail(`${key}.${field}`, `one of ${allowed.join(" | ")}`, v);
  return v as T;
}

function arrayField(o: Obj, field: string, key: string): unknown[] {
  const v = o[field];
  if (!Array.isArray(v)) fail(`${key}.${field}`, "a list", v);
  return v;
}

/** "ip:port" with an IPv4 address or a bracketed IPv6 one; Envoy static clusters take IPs only. */
function isEndpoint(value: unknown): value is string {
  if (typeof value !== "string") return false;
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  if (!m) return false;
  const ip = m[1] ?? m[2]!;
  const port = Number(m[3]);
  return (m[1] ? net.isIPv6(ip) : net.isIPv4(ip)) && port >= 1 && port <= 65535;
}

function parseListener(value: unknown, key: string, fallbackPort: number): ListenerConfig {
  const o = value === undefined ? {} : objectAt(value, key);
  // Port 0 lets the OS pick a free port (tests read the bound port back).
  return { host: stringField(o, "host", key, "127.0.0.1"), port: intField(o, "port", key, fallbackPort, 0, 65535) };
}

function parseHealthCheck(value: unknown, key: string): HealthCheckConfig {
  const o = objectAt(value, key);
  const d = DEFAULT_HEALTH_CHECK;
  const hc: HealthCheckConfig = {
    path: stringField(o, "path", key, d.path),
    interval_ms: intField(o, "interval_ms", key, d.interval_ms, 1),
    timeout_ms: intField(o, "timeout_ms", key, d.timeout_ms, 1),
    unhealthy_threshold: intField(o, "unhealthy_threshold", key, d.unhealthy_threshold, 1),
    healthy_threshold: intField(o, "healthy_threshold", key, d.healthy_threshold, 1),
  };
  if (!hc.path.startsWith("/")) fail(`${key}.path`, "a path starting with '/'", hc.path);
  return hc;
}

function parseCluster(value: unknown, key: string): ClusterConfig {
  const o = objectAt(value, key);
  const name = stringField(o, "name", key);
  if (name === "") fail(`${key}.name`, "a non-empty string", name);
  const type = oneOf(o, "type", key, CLUSTER_TYPES, "static");
  const endpoints = type === "original_dst" && o.endpoints === undefined ? [] : arrayField(o, "endpoints", key).map((e, i) =>
    isEndpoint(e) ? e : fail(`${key}.endpoints[${i}]`, "ip:port", e));
  if (endpoints.length === 0 && type !== "original_dst") fail(`${key}.endpoints`, "at least one endpoint", []);
  if (endpoints.length > 0 && type === "original_dst") fail(`${key}.endpoints`, "no endpoints on an original_dst cluster", endpoints);
  const hc = o.health_check === undefined || o.health_check === null ? null : parseHealthCheck(o.health_check, `${key}.health_check`);
  if (hc && type !== "static") fail(`${key}.health_check`, `no health_check on a ${type} cluster`, o.health_check);
  return {
    name,
    type,
    lb_policy: oneOf(o, "lb_policy", key, LB_POLICIES, "round_robin"),
    connect_timeout_ms: intField(o, "connect_timeout_ms", key, DEFAULT_CONNECT_TIMEOUT_MS, 1),
    endpoints,
    health_check: hc,
  };
}

function parseRoute(value: unknown, key: string): RouteConfig {
  const o = objectAt(value, key);
  const match = optionalObject(o, "match", `${key}.match`) ?? {};
  const domains = match.domains === undefined ? ["*"] : arrayField(match, "domains", `${key}.match`).map((d, i) =>
    typeof d === "string" && d !== "" ? d : fail(`${key}.match.domains[${i}]`, "a non-empty string", d));
  // Envoy's cluster_specifier is a oneof: exactly one of cluster and cluster_header.
  if (o.cluster !== undefined && o.cluster_header !== undefined) {
    fail(key, "exactly one of cluster and cluster_header", { cluster: o.cluster, cluster_header: o.cluster_header });
  }
  const clusterHeader = o.cluster_header === undefined ? null : stringField(o, "cluster_header", key).toLowerCase();
  if (clusterHeader !== null && !/^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(clusterHeader)) {
    fail(`${key}.cluster_header`, "an HTTP header name", o.cluster_header);
  }
  const notFound = o.cluster_not_found_response_code ?? 503;
  if (!CLUSTER_NOT_FOUND_CODES.includes(notFound as 503)) {
    fail(`${key}.cluster_not_found_response_code`, `one of ${CLUSTER_NOT_FOUND_CODES.join(" | ")}`, notFound);
  }
  return {
    // Envoy's Route.name is optional; an unnamed route gives the filter an empty `route_name`
    // property (context.cc: StreamInfo::getRouteName()), which no `_match_route_` rule matches.
    name: stringField(o, "name", key, ""),
    match: { prefix: stringField(match, "prefix", `${key}.match`, "/"), domains },
    cluster: clusterHeader === null ? stringField(o, "cluster", key) : "",
    cluster_header: clusterHeader,
    cluster_not_found_response_code: notFound as number,
    timeout_ms: intField(o, "timeout_ms", key, DEFAULT_ROUTE_TIMEOUT_MS, 0),
    // Envoy runs a listener's HTTP filters on every route unless a route disables them.
    plugin: boolField(o, "plugin", key, true),
  };
}

function parsePlugin(value: unknown, key: string, baseDir: string): PluginConfig {
  const o = objectAt(value, key);
  const wasm = stringField(o, "wasm", key);
  const raw = o.configuration;
  let configuration: string;
  if (raw === undefined || raw === null) configuration = "{}";
  else if (typeof raw === "string") {
    // The plugin configuration may hold a Redis password: the message names where the JSON
    // breaks, never its text (V8's JSON.parse message quotes the input, so it is not used).
    try { JSON.parse(raw); } catch (e) {
      const at = /position (\d+)/.exec((e as Error).message);
      throw new Error(`${key}.configuration: expected a JSON document, got invalid JSON${at ? ` (at character ${at[1]})` : ""}; its text is not shown`);
    }
    configuration = raw;
  } else if (typeof raw === "object") configuration = JSON.stringify(raw);
  else fail(`${key}.configuration`, "a mapping or a JSON string", typeof raw);
  return {
    wasm: path.resolve(baseDir, wasm),
    root_id: stringField(o, "root_id", key, ""),
    vm_config: stringField(o, "vm_config", key, ""),
    log_level: oneOf(o, "log_level", key, LOG_LEVELS, "info"),
    configuration,
  };
}

/** Where and what, without the `yaml` library's excerpt of the file (which can show a password). */
function yamlProblem(e: unknown): string {
  if (e instanceof YAMLError) {
    const pos = e.linePos?.[0];
    return `${e.code}${pos ? ` at line ${pos.line}, column ${pos.col}` : ""}; the file's text is not shown`;
  }
  return "unreadable document";
}

export function parseGatewayConfig(text: string, baseDir: string): GatewayConfig {
  let doc: unknown;
  try { doc = parseYaml(text); } catch (e) { throw new Error(`gateway config: invalid YAML: ${yamlProblem(e)}`); }
  const root = objectAt(doc ?? {}, "gateway config");
  const clusters = arrayField(root, "clusters", "gateway config").map((c, i) => parseCluster(c, `clusters[${i}]`));
  const names = new Set<string>();
  clusters.forEach((c, i) => {
    if (names.has(c.name)) fail(`clusters[${i}].name`, "a unique cluster name", c.name);
    names.add(c.name);
  });
  const routes = (root.routes === undefined ? [] : arrayField(root, "routes", "gateway config"))
    .map((r, i) => parseRoute(r, `routes[${i}]`));
  routes.forEach((r, i) => {
    if (r.cluster_header !== null) return; // resolved per request; an unknown name is answered then
    const target = clusters.find((c) => c.name === r.cluster);
    if (!target || target.type !== "static") fail(`routes[${i}].cluster`, "the name of a static cluster", r.cluster);
  });
  return {
    listener: parseListener(root.listener, "listener", 10000),
    admin: root.admin === undefined || root.admin === null ? null : parseListener(root.admin, "admin", 15000),
    workers: intField(root, "workers", "gateway config", 1, 1, 64),
    clusters,
    routes,
    plugin: root.plugin === undefined || root.plugin === null ? null : parsePlugin(root.plugin, "plugin", baseDir),
  };
}

export function loadGatewayConfig(file: string): GatewayConfig {
  return parseGatewayConfig(fs.readFileSync(file, "utf8"), path.dirname(path.resolve(file)));
}

/**
 * Envoy virtual-host domain forms: "*" (any), suffix wildcard "*.example.com", prefix wildcard
 * "example.*"; a wildcard never matches the empty string. Case-insensitive. The authority's port
 * is ignored unless the domain names one.
 * https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/route/v3/route_components.proto (VirtualHost.domains)
 */
export function domainMatches(domain: string, authority: string): boolean {
  const d = domain.toLowerCase();
  const full = authority.toLowerCase();
  const host = d.includes(":") ? full : full.replace(/:\d+$/, "");
  if (d === "*") return true;
  if (d.startsWith("*")) return host.length > d.length - 1 && host.endsWith(d.slice(1));
  if (d.endsWith("*")) return host.length > d.length - 1 && host.startsWith(d.slice(0, -1));
  return host === d;
}

/** First route whose prefix starts `path` and one of whose domains matches `authority`. */
export function matchRoute(cfg: GatewayConfig, authority: string, requestPath: string): RouteConfig | null {
  for (const route of cfg.routes) {
    if (!requestPath.startsWith(route.match.prefix)) continue;
    if (route.match.domains.some((d) => domainMatches(d, authority))) return route;
  }
  return null;
}
