// The test facade (in the manner of tetratelabs proxytest): one PluginHost over a FacadeBackend
// with a manual clock and recorded callouts, plus verbs to create streams.
// Usage: const h = await TestHost.create({ wasm, configuration }); const s = h.stream({...});
// Failure behaviour: create() rejects when the module is refused; a rejected configuration shows
// in `h.configured[i] === false`.
import type { LogLevelName } from "../abi/constants.js";
import type { HealthStatusName, UpstreamHostInfo } from "../abi/backend.js";
import { HeaderMap } from "../abi/header-map.js";
import type { LogRecord } from "../abi/logs.js";
import { PluginHost } from "../abi/plugin-host.js";
import { FacadeBackend, type FacadeRoute, type HttpMode, type RedisMode } from "./facade-backend.js";
import { HIGRESS_PROFILE, type EnvoyProfile } from "../abi/envoy-profile.js";
import { TestStream } from "./test-stream.js";

export interface HostSpec { address: string; health?: HealthStatusName; metrics?: string }

export interface TestHostOptions {
  wasm: Uint8Array | string;
  /** An object (sent as its JSON), JSON text, or raw bytes (a BytesValue configuration). */
  configuration?: object | string | Buffer;
  vmConfiguration?: string;
  workers?: number;
  rootId?: string;
  pluginName?: string;
  vmId?: string;
  logLevel?: LogLevelName;
  failOpen?: boolean;
  /** Envoy behaviour where versions/listeners differ (default: Higress 2.2 on HTTP/1, envoy-profile.ts). */
  profile?: Partial<EnvoyProfile>;
  /** Shorthand for profile.bufferLimitBytes (default Higress's 32 KiB). */
  bufferLimitBytes?: number;
  /**
   * The Redis clusters that exist (Envoy: thread-local clusters), by name without `?…`: redis_init
   * and redis_call on any other name are BadArgument, as in Envoy.
   */
  redisClusters?: string[];
  /** The Redis clusters' connect_timeout (ms); default 10 s (Istio's, for Higress's clusters). */
  redisConnectTimeoutMs?: number;
  clusters?: Record<string, HostSpec[]>;
  /** Routing table used when the filter's header changes re-match the route (clear_route_cache). */
  routes?: FacadeRoute[];
  redis?: RedisMode;
  http?: HttpMode;
  startTimeMs?: number;
}

export interface StreamSpec {
  vm?: number;
  route?: string | null;
  cluster?: string | null;
  authority?: string;
  method?: string;
  path?: string;
  headers?: Record<string, string> | Array<[string, string]>;
  sourceAddress?: string;
}

const toHostInfo = (h: HostSpec): UpstreamHostInfo => ({ address: h.address, health: h.health ?? "Healthy", metrics: h.metrics ?? "" });

export class TestHost {
  private constructor(readonly plugin: PluginHost, readonly backend: FacadeBackend) {}

  static async create(o: TestHostOptions): Promise<TestHost> {
    const profile = TestHost.profileOf(o);
    const backend = new FacadeBackend(o.startTimeMs ?? 1_700_000_000_000, o.redis ?? "record", o.http ?? "record", profile);
    for (const [name, hosts] of Object.entries(o.clusters ?? {})) backend.clusters.set(name, hosts.map(toHostInfo));
    for (const name of o.redisClusters ?? []) backend.redisClusters.add(name);
    if (o.redisConnectTimeoutMs !== undefined) backend.redisConnectTimeoutMs = o.redisConnectTimeoutMs;
    backend.routes = o.routes ?? null;
    return new TestHost(await TestHost.loadPlugin(o, backend, profile), backend);
  }

  private static profileOf(o: TestHostOptions): EnvoyProfile {
    return { ...HIGRESS_PROFILE, ...o.profile, ...(o.bufferLimitBytes === undefined ? {} : { bufferLimitBytes: o.bufferLimitBytes }) };
  }

  private static loadPlugin(o: TestHostOptions, backend: FacadeBackend, profile: EnvoyProfile): Promise<PluginHost> {
    const c = o.configuration;
    const configuration = c === undefined ? "" : typeof c === "string" || Buffer.isBuffer(c) ? c : JSON.stringify(c);
    return PluginHost.load(o.wasm, backend, {
      workers: o.workers ?? 1,
      rootId: o.rootId ?? "",
      pluginName: o.pluginName ?? "llm-lb",
      vmId: o.vmId ?? "",
      vmConfiguration: o.vmConfiguration ?? "",
      configuration,
      logLevel: o.logLevel ?? "trace",
      failOpen: o.failOpen ?? false,
      profile,
      sharedData: backend.sharedData,
      sharedQueues: backend.sharedQueues,
    });
  }

  /**
   * A second plugin (its own VMs, one per worker) on the same Envoy: same workers, clusters,
   * clock, shared Redis clients, shared data and shared queues. Its own profile options are ignored for Redis (per process).
   */
  async addPlugin(o: TestHostOptions): Promise<TestHost> {
    return new TestHost(await TestHost.loadPlugin(o, this.backend, TestHost.profileOf(o)), this.backend);
  }

  /** A configuration update: a new root context on each VM, the old ones drain (plugin-host.ts). */
  updateConfiguration(configuration: object | string): boolean[] {
    return this.plugin.updateConfiguration(typeof configuration === "string" ? configuration : JSON.stringify(configuration));
  }

  get configured(): boolean[] { return this.plugin.configured; }
  get vms() { return this.plugin.vms; }
  get redisCalls() { return this.backend.redisCalls; }
  get redisHistory() { return this.backend.redisHistory; }
  /** Real Redis: every call sent (worker, RESP query). */
  get redisSent() { return this.backend.redisSent; }
  get httpCalls() { return this.backend.httpCalls; }
  get now(): number { return this.backend.clock.now(); }

  logs(level?: LogLevelName, filter: { vm?: number; contextId?: number } = {}): LogRecord[] {
    return this.plugin.logs.query(level, filter);
  }
  /** Just the messages, for readable assertions. */
  logMessages(level?: LogLevelName, filter: { vm?: number; contextId?: number } = {}): string[] {
    return this.logs(level, filter).map((r) => r.message);
  }

  /** A plugin metric: by its defined name, or by its Prometheus name and labels (histograms as of the last stats flush). */
  metric(name: string, labels?: Record<string, string>) { return this.plugin.metrics.valueOf(name, labels); }

  /** Envoy's periodic stats flush: histogram values recorded so far become visible. */
  flushStats(): void { this.plugin.metrics.mergeHistograms(); }

  /** Moves the manual clock (fires ticks and callout timeouts that fall due). */
  advance(ms: number): void { this.backend.clock.advance(ms); }
  /** Steps the system clock the plugin reads by `ms` (negative: backwards); timers are unaffected. */
  stepWallClock(ms: number): void { this.backend.clock.stepWall(ms); }

  setUpstreamHosts(cluster: string, hosts: HostSpec[]): void { this.backend.clusters.set(cluster, hosts.map(toHostInfo)); }

  /** Waits until no real Redis/HTTP callout is in flight. */
  redisIdle(): Promise<void> { return this.backend.idle(); }
  calloutsIdle(): Promise<void> { return this.backend.idle(); }

  stream(spec: StreamSpec = {}): TestStream {
    const headers = new HeaderMap([
      [":authority", spec.authority ?? "example.com"],
      [":path", spec.path ?? "/"],
      [":method", spec.method ?? "GET"],
      [":scheme", "http"],
    ]);
    const extra = spec.headers ? (Array.isArray(spec.headers) ? spec.headers : Object.entries(spec.headers)) : [];
    for (const [k, v] of extra) {
      if (k.startsWith(":")) headers.replace(k, v); else headers.add(k, v);
    }
    const firstCluster = this.backend.clusters.keys().next();
    const ts = new TestStream(this.backend, headers);
    ts.stream = this.plugin.newStream(spec.vm ?? this.plugin.pickVm(), ts, {
      route: spec.route === undefined ? "default" : spec.route,
      cluster: spec.cluster === undefined ? (firstCluster.done ? null : firstCluster.value) : spec.cluster,
      sourceAddress: spec.sourceAddress ?? "127.0.0.1:50000",
      destinationAddress: "127.0.0.1:10000",
      protocol: "HTTP/1.1",
      startTimeMs: this.backend.clock.now(),
    });
    return ts;
  }

  close(): void {
    this.plugin.shutdown();
    this.backend.close();
  }
}
