// The HostBackend of the test facade: manual clock, upstream hosts set by the test, and Redis /
// HTTP callouts either recorded for the test to answer or sent to a real server.
// Redis (higress-abi.md): redis_init is recorded per VM and cluster (re-init replaces, closing
// that VM's client); redis_call on a cluster this VM never initialised returns BadArgument (our
// choice: the Higress source was not available to check; it is the status Envoy's http_call
// gives an unknown cluster). Record mode: the call's timeout (from redis_init) runs on the manual
// clock and ends the call as NetworkError. Real mode: each VM gets its own RedisClusterClient.
// HTTP calls: the cluster must be one of `clusters` (Envoy: unknown cluster -> BadArgument).
// Failure behaviour: statuses to the guest; never throws on the guest's path.
import { WasmResult } from "../abi/constants.js";
import type { HeaderMap } from "../abi/header-map.js";
import type { HostBackend, HttpCalloutRequest, HttpCalloutResponse, RouteMatch, UpstreamHostInfo } from "../abi/backend.js";
import { parseRedisClusterName } from "../gateway/cluster-name.js";
import { RedisClusterClient } from "../gateway/redis-client.js";
import { sendHttpCallout } from "../gateway/http-callout.js";
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

interface RedisInit { user: string; pass: string; timeoutMs: number; client: RedisClusterClient | null }

export class FacadeBackend implements HostBackend {
  readonly clock: ManualClock;
  readonly clusters = new Map<string, UpstreamHostInfo[]>();
  routes: FacadeRoute[] | null = null;
  /** Pending recorded calls (answered ones leave the list). */
  readonly redisCalls: RecordedRedisCall[] = [];
  readonly httpCalls: RecordedHttpCall[] = [];
  /** Every Redis call ever made, answered or not. */
  readonly redisHistory: RecordedRedisCall[] = [];
  readonly redisInits = new Map<string, RedisInit>();
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(startMs: number, private readonly redisMode: RedisMode, private readonly httpMode: HttpMode) {
    this.clock = new ManualClock(startMs);
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

  redisInit(vm: number, cluster: string, user: string, pass: string, timeoutMs: number): number {
    const name = parseRedisClusterName(cluster);
    const key = `${vm}|${name.lookup}`;
    this.redisInits.get(key)?.client?.close();
    let client: RedisClusterClient | null = null;
    if (this.redisMode !== "record") {
      const u = new URL(this.redisMode.url);
      client = new RedisClusterClient({
        host: u.hostname, port: Number(u.port || 6379), username: user || undefined, password: pass || undefined,
        db: name.db, timeoutMs,
      });
    }
    this.redisInits.set(key, { user, pass, timeoutMs, client });
    return WasmResult.Ok;
  }

  redisCall(vm: number, cluster: string, query: Buffer, done: (reply: Buffer | null) => void): number {
    const init = this.redisInits.get(`${vm}|${parseRedisClusterName(cluster).lookup}`);
    if (!init) return WasmResult.BadArgument;
    if (init.client) {
      const p = init.client.call(query).then(done, () => done(null));
      this.track(p);
      return WasmResult.Ok;
    }
    const call = new RecordedRedisCall(vm, cluster, query, done, (c) => this.redisCalls.splice(this.redisCalls.indexOf(c), 1));
    this.redisCalls.push(call);
    this.redisHistory.push(call);
    if (init.timeoutMs > 0) this.clock.schedule(init.timeoutMs, () => call.timeout());
    return WasmResult.Ok;
  }

  httpCall(req: HttpCalloutRequest, done: (res: HttpCalloutResponse | null) => void): number {
    const hosts = this.clusters.get(req.cluster);
    if (!hosts) return WasmResult.BadArgument;
    if (this.httpMode === "real") {
      const target = hosts.find((h) => h.health !== "Unhealthy") ?? hosts[0];
      if (!target) return WasmResult.BadArgument;
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
    for (const init of this.redisInits.values()) init.client?.close();
  }
}

/** One real HTTP/1.1 exchange with `address`, bounded by the call's timeout (null on failure). */
function realHttpCall(address: string, req: HttpCalloutRequest): Promise<HttpCalloutResponse | null> {
  return new Promise((resolve) => sendHttpCallout(address, req, undefined, resolve));
}
