// The HostBackend of the test facade: manual clock, upstream hosts set by the test, and Redis /
// HTTP callouts either recorded for the test to answer or sent to a real server.
// Redis, as Envoy shares it (redis-shared.ts, audit rows 3 and 12): one client per worker and
// cluster, shared by every VM, root and plugin on the worker; a redis_init re-initialises it for
// everyone (closing it fails every call in flight on it; profile redisReinit). A cluster is known
// once anybody initialised it (or when listed in `redisClusters`); a call on a known cluster
// nobody initialised on this worker uses the defaults (1000 ms timeout); an unknown cluster is
// BadArgument (Higress context.cc redisCall finds no thread-local cluster). Record mode: the
// call's op timeout runs on the manual clock and ends it as NetworkError. Real mode:
// SharedRedisClients over the given server.
// HTTP calls: the cluster must be one of `clusters` (Envoy: unknown cluster -> BadArgument).
// Failure behaviour: statuses to the guest; never throws on the guest's path.
import { WasmResult } from "../abi/constants.js";
import type { HeaderMap } from "../abi/header-map.js";
import type { HostBackend, HttpCalloutRequest, HttpCalloutResponse, RouteMatch, UpstreamHostInfo } from "../abi/backend.js";
import { redisLookupName } from "../gateway/cluster-name.js";
import { SharedRedisClients, defaultRedisSettings, redisSettings, sameSettings, type RedisClientSettings, type RedisEndpoint } from "../gateway/redis-shared.js";
import { sendHttpCallout } from "../gateway/http-callout.js";
import type { EnvoyProfile } from "../abi/envoy-profile.js";
import { ManualClock } from "./manual-clock.js";
import { RecordedHttpCall, RecordedRedisCall } from "./callouts.js";

export type RedisMode = "record" | { url: string };
export type HttpMode = "record" | "real";

export interface FacadeRoute {
  name: string;
  cluster: string;
  /** Path prefix (default "/"). */
  prefix?: string;
  /** Optional header that must equal the value. */
  header?: [string, string];
}


export class FacadeBackend implements HostBackend {
  readonly clock: ManualClock;
  readonly clusters = new Map<string, UpstreamHostInfo[]>();
  routes: FacadeRoute[] | null = null;
  /** Pending recorded calls (answered ones leave the list). */
  readonly redisCalls: RecordedRedisCall[] = [];
  readonly httpCalls: RecordedHttpCall[] = [];
  /** Every Redis call ever made, answered or not. */
  readonly redisHistory: RecordedRedisCall[] = [];
  /** Real mode: every call sent to the server (its worker and RESP query), for tests to count. */
  readonly redisSent: { vm: number; query: Buffer }[] = [];
  /** Record mode: the settings of each worker's client, by `${worker}|${lookup}`. */
  readonly redisInits = new Map<string, RedisClientSettings>();
  /** Redis clusters that exist (Envoy: a thread-local cluster). */
  readonly redisClusters = new Set<string>();
  /** Real mode: the shared clients. */
  readonly sharedRedis: SharedRedisClients;
  /** redis_init calls that closed a live client (record and real mode). */
  redisReinitCloses = 0;
  /**
   * Redis clusters whose load balancer has no host for now: proxy_redis_call fails at once
   * (Envoy AsyncClientImpl::send returns nullptr, "no available host"; the status Higress's
   * context.cc then returns was not verified: InternalFailure here).
   */
  readonly redisNoHost = new Set<string>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly redisEndpoint: RedisEndpoint | null;

  constructor(startMs: number, private readonly redisMode: RedisMode, private readonly httpMode: HttpMode,
    private readonly profile: Pick<EnvoyProfile, "redisReinit" | "redisFlushParams">) {
    this.clock = new ManualClock(startMs);
    this.sharedRedis = new SharedRedisClients(profile);
    if (redisMode === "record") {
      this.redisEndpoint = null;
    } else {
      const u = new URL(redisMode.url);
      this.redisEndpoint = { host: u.hostname, port: Number(u.port || 6379) };
    }
  }

  now(): number { return this.clock.now(); }
  schedule(delayMs: number, fn: () => void): () => void { return this.clock.schedule(delayMs, fn); }

  upstreamHosts(cluster: string): UpstreamHostInfo[] { return this.clusters.get(cluster) ?? []; }

  matchRoute(headers: HeaderMap): RouteMatch | null | undefined {
    if (!this.routes) return undefined;
    const path = headers.get(":path") ?? "/";
    const r = this.routes.find((rt) => path.startsWith(rt.prefix ?? "/") && (!rt.header || headers.get(rt.header[0]) === rt.header[1]));
    return r ? { route: r.name, cluster: r.cluster } : null;
  }

  redisInit(worker: number, cluster: string, user: string, pass: string, timeoutMs: number): number {
    const lookup = redisLookupName(cluster);
    this.redisClusters.add(lookup);
    if (this.redisEndpoint) {
      const before = this.sharedRedis.reinitCloses;
      this.sharedRedis.init(worker, cluster, user, pass, timeoutMs, this.redisEndpoint);
      this.redisReinitCloses += this.sharedRedis.reinitCloses - before;
      return WasmResult.Ok;
    }
    const key = `${worker}|${lookup}`;
    const settings = redisSettings(cluster, user, pass, timeoutMs, this.profile.redisFlushParams);
    const old = this.redisInits.get(key);
    if (old && !(this.profile.redisReinit === "close-if-changed" && sameSettings(old, settings))) {
      // Re-initialising closes the shared client: every call in flight on it fails.
      this.redisReinitCloses++;
      for (const c of this.redisCalls.filter((x) => x.vm === worker && redisLookupName(x.cluster) === lookup)) c.fail();
    }
    if (!old || !sameSettings(old, settings)) this.redisInits.set(key, settings);
    return WasmResult.Ok;
  }

  redisCall(worker: number, cluster: string, query: Buffer, done: (reply: Buffer | null) => void): number {
    const lookup = redisLookupName(cluster);
    if (!this.redisClusters.has(lookup)) return WasmResult.BadArgument;
    if (this.redisNoHost.has(lookup)) return WasmResult.InternalFailure;
    if (this.redisEndpoint) {
      this.redisSent.push({ vm: worker, query });
      this.track(this.sharedRedis.client(worker, cluster, this.redisEndpoint).call(query).then(done, () => done(null)));
      return WasmResult.Ok;
    }
    const settings = this.redisInits.get(`${worker}|${lookup}`) ?? defaultRedisSettings(this.profile.redisFlushParams);
    const call = new RecordedRedisCall(worker, cluster, query, done, (c) => this.redisCalls.splice(this.redisCalls.indexOf(c), 1));
    this.redisCalls.push(call);
    this.redisHistory.push(call);
    if (settings.timeoutMs > 0) this.clock.schedule(settings.timeoutMs, () => call.timeout());
    return WasmResult.Ok;
  }

  httpCall(req: HttpCalloutRequest, done: (res: HttpCalloutResponse | null) => void): number {
    const hosts = this.clusters.get(req.cluster);
    if (!hosts) return WasmResult.BadArgument;
    if (this.httpMode === "real") {
      const target = hosts.find((h) => h.health !== "Unhealthy");
      if (!target) return WasmResult.InternalFailure; // as Envoy: no callback (gateway-backend.ts)
      this.track(realHttpCall(target.address, req).then(done));
      return WasmResult.Ok;
    }
    const call = new RecordedHttpCall(req.vm, req.cluster, req.headers, req.body, req.timeoutMs, done,
      (c) => this.httpCalls.splice(this.httpCalls.indexOf(c), 1));
    this.httpCalls.push(call);
    if (req.timeoutMs > 0) this.clock.schedule(req.timeoutMs, () => call.timeout());
    return WasmResult.Ok;
  }

  private track(p: Promise<unknown>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  /** Resolves once no real callout is in flight (replies may start new calls: loop until quiet). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  close(): void {
    this.sharedRedis.close();
  }
}

/** One real HTTP/1.1 exchange with `address`, bounded by the call's timeout (null on failure). */
function realHttpCall(address: string, req: HttpCalloutRequest): Promise<HttpCalloutResponse | null> {
  return new Promise((resolve) => sendHttpCallout(address, req, undefined, resolve));
}
