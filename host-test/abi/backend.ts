// The I/O seam of the ABI core. The core never opens a socket or a timer itself: the test facade
// (manual clock, record-then-reply callouts) and the gateway (real timers, Redis, HTTP) implement
// this interface differently. Callbacks passed here must be invoked asynchronously, never from
// inside the call that registered them (Envoy delivers callout replies on a later event-loop turn).
import type { Pair } from "./pairs.js";
import type { HeaderMap } from "./header-map.js";

/** Envoy host health names as Higress reports them in get_upstream_hosts (higress-abi.md). */
export type HealthStatusName = "Healthy" | "Unhealthy" | "Degraded" | "Timeout" | "Unknown" | "Draining";

export interface UpstreamHostInfo {
  /** "ip:port" */
  address: string;
  health: HealthStatusName;
  /** Body of the host's last active health check (empty when none). */
  metrics?: string;
}

export interface HttpCalloutRequest {
  vm: number;
  cluster: string;
  headers: Pair[];
  body: Buffer;
  trailers: Pair[];
  timeoutMs: number;
}

export interface HttpCalloutResponse {
  headers: Pair[];
  body: Buffer;
  trailers?: Pair[];
}

export interface RouteMatch {
  route: string;
  cluster: string;
}

export interface HostBackend {
  /** Wall-clock milliseconds since the epoch (may be fractional). */
  now(): number;
  /** One-shot timer; returns a canceller. */
  schedule(delayMs: number, fn: () => void): () => void;
  /** Returns a WasmResult status. */
  redisInit(vm: number, cluster: string, username: string, password: string, timeoutMs: number): number;
  /** Returns a WasmResult status; when Ok, `done` is called later with the raw RESP reply or null (NetworkError). */
  redisCall(vm: number, cluster: string, query: Buffer, done: (reply: Buffer | null) => void): number;
  /** Returns a WasmResult status; when Ok, `done` is called later with the response or null (failure/timeout). */
  httpCall(req: HttpCalloutRequest, done: (res: HttpCalloutResponse | null) => void): number;
  /** Hosts of a cluster (empty when unknown). */
  upstreamHosts(cluster: string): UpstreamHostInfo[];
  /**
   * Route re-match after the filter changed request headers (Higress clear_route_cache):
   * a match, null (no route matches any more), or undefined (no routing table: keep the route).
   */
  matchRoute(headers: HeaderMap): RouteMatch | null | undefined;
  /**
   * Optional source for WASI random_get (default: crypto randomness, as cpp-host). A benchmark's
   * virtual-time driver supplies a seeded one so a run is reproducible.
   */
  random?(out: Buffer): void;
}
