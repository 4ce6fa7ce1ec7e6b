// The HostBackend of the real gateway: wall clock and timers, Redis clients shared per worker and
// cluster (redis-shared.ts, as Envoy shares them between VMs and plugins), http_call over real
// HTTP to a cluster endpoint (picked by the cluster's load balancer among eligible hosts; its
// failures answered as the router's local replies, http-callout.ts), upstream hosts from the
// health checkers, and route re-matching from the YAML routes.
// Failure behaviour: statuses to the guest (BadArgument for an unknown cluster, as Envoy's
// httpCall does; the same for redis: Higress context.cc redisCall finds no thread-local cluster);
// callout failures are delivered as NetworkError / local-reply responses, never thrown.
import type http from "node:http";
import { WasmResult } from "../abi/constants.js";
import type { HeaderMap } from "../abi/header-map.js";
import type { HostBackend, HttpCalloutRequest, HttpCalloutResponse, RouteMatch, UpstreamHostInfo } from "../abi/backend.js";
import { eligibleHosts } from "../abi/upstream-selection.js";
import { redisLookupName } from "./cluster-name.js";
import { matchRoute, type ClusterConfig, type GatewayConfig, type RouteConfig } from "./config.js";
import { routeCluster } from "./cluster-header.js";
import type { HealthChecker } from "./health.js";
import type { LocalLoadBalancer } from "./local-lb.js";
import { SharedRedisClients, type RedisEndpoint } from "./redis-shared.js";
import { sendHttpCallout, originalDestination } from "./http-callout.js";
import type { EnvoyProfile } from "../abi/envoy-profile.js";
import { splitAddress } from "./address.js";

export class GatewayBackend implements HostBackend {
  readonly redis: SharedRedisClients;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly cfg: GatewayConfig,
    private readonly health: Map<string, HealthChecker>,
    private readonly balancers: Map<string, LocalLoadBalancer>,
    private readonly agent: http.Agent,
    private readonly panicThresholdPercent: number,
    profile: Pick<EnvoyProfile, "redisReinit" | "redisFlushParams">,
  ) {
    this.redis = new SharedRedisClients(profile);
  }

  now(): number { return Date.now(); }

  schedule(delayMs: number, fn: () => void): () => void {
    const t = setTimeout(() => { this.timers.delete(t); fn(); }, delayMs);
    this.timers.add(t);
    return () => { clearTimeout(t); this.timers.delete(t); };
  }

  cluster(name: string): ClusterConfig | undefined { return this.cfg.clusters.find((c) => c.name === name); }

  upstreamHosts(cluster: string): UpstreamHostInfo[] {
    const checker = this.health.get(cluster);
    if (!checker) return [];
    return checker.snapshot().map((h) => ({ address: h.address, health: h.health, metrics: h.body }));
  }

  matchRoute(headers: HeaderMap): RouteMatch | null {
    const r = matchRoute(this.cfg, headers.get(":authority") ?? "", headers.get(":path") ?? "/");
    return r ? { route: r.name, cluster: routeCluster(r, headers) } : null;
  }

  route(name: string | null): RouteConfig | undefined { return this.cfg.routes.find((r) => r.name === name); }

  private redisEndpoint(cluster: string): RedisEndpoint | null {
    const c = this.cluster(redisLookupName(cluster));
    if (!c || c.type !== "redis") return null;
    const { host, port } = splitAddress(c.endpoints[0]);
    return { host, port, connectTimeoutMs: c.connect_timeout_ms };
  }

  redisInit(worker: number, cluster: string, username: string, password: string, timeoutMs: number): number {
    const endpoint = this.redisEndpoint(cluster);
    if (!endpoint) return WasmResult.BadArgument;
    this.redis.init(worker, cluster, username, password, timeoutMs, endpoint);
    return WasmResult.Ok;
  }

  redisCall(worker: number, cluster: string, query: Buffer, done: (reply: Buffer | null) => void): number {
    const endpoint = this.redisEndpoint(cluster);
    if (!endpoint) return WasmResult.BadArgument;
    this.redis.client(worker, cluster, endpoint).call(query).then(done, () => done(null));
    return WasmResult.Ok;
  }

  httpCall(req: HttpCalloutRequest, done: (res: HttpCalloutResponse | null) => void): number {
    const c = this.cluster(req.cluster);
    if (!c || c.type === "redis") return WasmResult.BadArgument;
    let address: string | null;
    if (c.type === "original_dst") {
      // Envoy: ORIGINAL_DST with use_http_header routes to the header's address (no LB, no health).
      address = originalDestination(req);
    } else {
      const lb = this.balancers.get(c.name);
      address = lb?.pick(eligibleHosts(this.upstreamHosts(c.name), this.panicThresholdPercent).map((h) => h.address)) ?? null;
    }
    if (address === null) {
      // The async client's router finds no healthy host and answers 503 at once, inside
      // send(): AsyncClientImpl::internalStartRequest returns null, and Envoy's
      // Context::httpCall returns InternalFailure and drops the token; no proxy_on_http_call_response
      // follows (envoy source/extensions/common/wasm/context.cc, router.cc
      // sendNoHealthyUpstreamResponse, async_client_impl.cc).
      return WasmResult.InternalFailure;
    }
    sendHttpCallout(address, req, this.agent, done);
    return WasmResult.Ok;
  }

  close(): void {
    this.redis.close();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
