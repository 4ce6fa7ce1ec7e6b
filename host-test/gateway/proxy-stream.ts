// One downstream HTTP request through the gateway: request headers (lowercased, with pseudo
// headers) and body chunks fed to the filter as they arrive; the request forwarded when the filter
// lets it go, to the override host if Envoy would honour it, else to the cluster's load balancer's
// pick; the upstream response streamed back chunk by chunk through the filter (no buffering
// unless the filter asks). Endings, each finishing the stream exactly once (done/log/delete):
// complete, local_reply, client_abort (DC), upstream_connect_failure (503, UF),
// upstream_reset (UC before response headers -> 503, UR after -> downstream reset), timeout
// (504 "upstream request timeout", UT), no_healthy_upstream (503, UH), filter_reset, vm_failure.
// Sources: Envoy router (local reply texts and response flags; route timeout runs from the end of
// the request until the response is complete; a reset after response headers resets downstream).
// Failure behaviour: never throws out of a request handler; every I/O error becomes an ending.
import http from "node:http";
import { randomUUID } from "node:crypto";
import { HeaderMap } from "../abi/header-map.js";
import type { PluginHost } from "../abi/plugin-host.js";
import type { HttpStream, LocalReply, StreamEnding, StreamSink } from "../abi/stream.js";
import { invalidHeader } from "./header-check.js";
import { decideUpstream } from "../abi/upstream-selection.js";
import type { ClusterConfig, RouteConfig } from "./config.js";
import type { GatewayBackend } from "./gateway-backend.js";
import type { LocalLoadBalancer } from "./local-lb.js";
import { PassThroughStream } from "./pass-through.js";
import type { GatewayStats } from "./stats.js";
import { splitAddress } from "./address.js";
import { CLUSTER_NOT_FOUND_DETAILS, routeCluster } from "./cluster-header.js";
import { CONNECT_FAILURES, connectFailureReply, routerReplyOf, type RouterReply, type RouterReplyKind } from "./http-callout.js";
import type { ResponseFlagName } from "../abi/constants.js";

// Connection-specific headers are never forwarded (RFC 9110 7.6.1; Envoy strips them).
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"]);
const EMPTY = Buffer.alloc(0);

export interface ProxyContext {
  backend: GatewayBackend;
  /** The Wasm plugin that runs on a route (null: none). */
  pluginFor(route: RouteConfig): PluginHost | null;
  stats: GatewayStats;
  balancers: Map<string, LocalLoadBalancer>;
  agent: http.Agent;
  panicThresholdPercent: number;
  /** Add `x-gateway-upstream-host` to responses (debugging; off by default). */
  debugUpstreamHeader: boolean;
}

type FilterStream = HttpStream | PassThroughStream;

function toNodeHeaders(h: HeaderMap): http.OutgoingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of h.pairs()) {
    if (k.startsWith(":") || HOP_BY_HOP.has(k)) continue;
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

export class ProxyStream implements StreamSink {
  private filter!: FilterStream;
  private upstreamReq: http.ClientRequest | null = null;
  private upstreamAddress: string | null = null;
  private upstreamResponded = false;
  private downstreamStarted = false;
  private ending: StreamEnding | null = null;
  private finished = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ctx: ProxyContext,
    private readonly req: http.IncomingMessage,
    private readonly res: http.ServerResponse,
    private readonly route: RouteConfig,
  ) {}

  run(): void {
    const { req, res, ctx } = this;
    ctx.stats.downstreamTotal++;
    ctx.stats.active++;
    const headers = new HeaderMap([
      [":authority", req.headers.host ?? ""],
      [":path", req.url ?? "/"],
      [":method", req.method ?? "GET"],
      [":scheme", "http"],
    ]);
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const k = req.rawHeaders[i].toLowerCase();
      if (k !== "host" && !HOP_BY_HOP.has(k)) headers.add(k, req.rawHeaders[i + 1]);
    }
    // Envoy generates x-request-id when the client sent none (generate_request_id default true).
    if (!headers.has("x-request-id")) headers.add("x-request-id", randomUUID());
    const bodyless = !req.headers["transfer-encoding"] && (req.headers["content-length"] === undefined || req.headers["content-length"] === "0");
    const plugin = ctx.pluginFor(this.route);
    const cluster = routeCluster(this.route, headers);
    this.filter = plugin
      ? plugin.newStream(plugin.pickVm(), this, {
        route: this.route.name, cluster,
        sourceAddress: `${req.socket.remoteAddress}:${req.socket.remotePort}`,
        destinationAddress: `${req.socket.localAddress}:${req.socket.localPort}`,
        protocol: `HTTP/${req.httpVersion}`, startTimeMs: Date.now(),
      })
      : new PassThroughStream(this, this.route.name, cluster);
    res.on("close", () => { if (!res.writableFinished) this.onClientAbort(); });
    res.on("finish", () => this.finish(this.ending ?? (this.filter.localReply ? "local_reply" : "complete")));
    this.filter.start(headers, bodyless);
    if (!bodyless) {
      req.on("data", (c: Buffer) => this.filter.requestData(c, false));
      req.on("end", () => this.filter.requestData(EMPTY, true));
    }
  }

  private clusterConfig(): ClusterConfig | undefined {
    return this.filter.cluster ? this.ctx.backend.cluster(this.filter.cluster) : undefined;
  }

  // ---- StreamSink: request side ----
  requestHeadersOut(headers: HeaderMap, endStream: boolean): void {
    if (this.filter.route === null) {
      // Router: the re-matched route is gone (a header change matched no route) -> 404, NR.
      this.ending = "local_reply";
      this.filter.hostReply(404, "route_not_found", "", "NR");
      return;
    }
    const cluster = this.clusterConfig();
    if (!cluster || cluster.type !== "static") {
      // Router: unknown cluster (a cluster_header route whose header is absent or names no
      // cluster). This gateway proxies HTTP to static clusters only, so it answers the same for
      // a redis/original_dst name.
      const route = this.ctx.backend.route(this.filter.route) ?? this.route;
      this.ending = "local_reply";
      this.filter.hostReply(route.cluster_not_found_response_code, CLUSTER_NOT_FOUND_DETAILS, "", "NC");
      return;
    }
    const invalid = invalidHeader(headers);
    if (invalid !== null) { // Envoy's upstream codec refuses it: local 503 (header-check.ts)
      this.ending = "local_reply";
      this.filter.hostReply(503, `filter_removed_required_request_headers{${invalid.replace(/\s/g, "_")}}`, invalid, "DPE");
      return;
    }
    const lb = cluster ? this.ctx.balancers.get(cluster.name) : undefined;
    const hosts = cluster ? this.ctx.backend.upstreamHosts(cluster.name) : [];
    const decision = decideUpstream(this.filter.overrideHost, hosts, (eligible) => lb?.pick(eligible) ?? null,
      { panicThresholdPercent: this.ctx.panicThresholdPercent });
    if (this.filter.overrideHost !== null) {
      if (decision.via === "override") this.ctx.stats.overrideHonoured++; else this.ctx.stats.overrideRefused++;
    }
    if (decision.address === null) {
      this.ending = "no_healthy_upstream";
      this.routerReply("no_healthy_upstream", "UH");
      return;
    }
    this.upstreamAddress = decision.address;
    this.filter.upstreamAddress = decision.address;
    lb?.onStart(decision.address);
    this.ctx.stats.countUpstream(decision.address);
    const { host, port } = splitAddress(decision.address);
    const up = http.request({
      host, port, agent: this.ctx.agent,
      method: headers.get(":method"), path: headers.get(":path"),
      headers: { ...toNodeHeaders(headers), host: headers.get(":authority") ?? "" },
    });
    this.upstreamReq = up;
    this.armConnectTimeout(up, cluster?.connect_timeout_ms ?? 5000);
    up.on("response", (ures) => this.onUpstreamResponse(ures));
    up.on("error", (err) => this.onUpstreamError(err as NodeJS.ErrnoException));
    if (endStream) { up.end(); this.armRouteTimeout(); }
  }

  requestDataOut(chunk: Buffer, endStream: boolean): void {
    const up = this.upstreamReq;
    if (!up || up.destroyed) return;
    if (chunk.length) up.write(chunk);
    if (endStream) { up.end(); this.armRouteTimeout(); }
  }

  // ---- StreamSink: response side ----
  responseHeadersOut(headers: HeaderMap, endStream: boolean): void {
    if (this.res.headersSent || this.res.destroyed) return;
    if (invalidHeader(headers) !== null) { // Envoy would write it as is; see header-check.ts
      this.resetRequested("filter_reset");
      return;
    }
    this.downstreamStarted = true;
    const out = toNodeHeaders(headers);
    if (this.ctx.debugUpstreamHeader && this.upstreamAddress) out["x-gateway-upstream-host"] = this.upstreamAddress;
    this.res.writeHead(Number(headers.get(":status") ?? 200), out);
    // Send headers now: a streaming (SSE) response must not wait for its first body chunk.
    this.res.flushHeaders();
    if (endStream) this.res.end();
  }

  responseDataOut(chunk: Buffer, endStream: boolean): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    if (chunk.length) this.res.write(chunk);
    if (endStream) this.res.end();
  }

  localReplyStarted(reply: LocalReply): void {
    this.abortUpstream();
    if (reply.details === "wasm_fail_stream") this.ending ??= "vm_failure";
    else if (!reply.byHost) this.ending ??= "local_reply";
    else this.ending ??= "local_reply";
  }

  resetRequested(reason: string): void {
    this.ending ??= reason === "wasm_fail_stream" ? "vm_failure" : "filter_reset";
    this.abortUpstream();
    this.res.destroy();
    this.finish(this.ending);
  }

  // ---- upstream events ----
  private onUpstreamResponse(ures: http.IncomingMessage): void {
    this.upstreamResponded = true;
    const headers = new HeaderMap([[":status", String(ures.statusCode ?? 502)]]);
    for (let i = 0; i < ures.rawHeaders.length; i += 2) {
      const k = ures.rawHeaders[i].toLowerCase();
      if (!HOP_BY_HOP.has(k)) headers.add(k, ures.rawHeaders[i + 1]);
    }
    const status = ures.statusCode ?? 0;
    const bodyless = this.req.method === "HEAD" || status === 204 || status === 304 || ures.headers["content-length"] === "0";
    ures.on("aborted", () => this.onUpstreamReset());
    ures.on("error", () => this.onUpstreamReset());
    if (bodyless) {
      ures.resume();
      ures.on("end", () => this.clearRouteTimeout());
      this.filter.responseHeaders(headers, true);
      return;
    }
    this.filter.responseHeaders(headers, false);
    ures.on("data", (c: Buffer) => this.filter.responseData(c, false));
    ures.on("end", () => {
      if (!ures.complete) return; // cut short: handled as a reset
      this.clearRouteTimeout();
      this.filter.responseData(EMPTY, true);
    });
  }

  private onUpstreamError(err: NodeJS.ErrnoException): void {
    if (this.finished || this.ending) return;
    if (this.upstreamResponded) { this.onUpstreamReset(); return; }
    const connectFailure = CONNECT_FAILURES.has(err.code ?? "");
    this.clearRouteTimeout();
    this.releaseUpstream();
    if (connectFailure) {
      this.ending = "upstream_connect_failure";
      this.routerReply(connectFailureReply(err.code ?? ""), "UF");
    } else {
      this.ending = "upstream_reset";
      this.routerReply("connection_termination", "UC");
    }
  }

  private routerReply(kind: RouterReplyKind | RouterReply, flag: ResponseFlagName): void {
    const r = routerReplyOf(kind);
    this.filter.hostReply(r.status, r.details, r.body, flag);
  }

  /** A reset after response headers: Envoy can only reset the downstream stream (UR). */
  private onUpstreamReset(): void {
    if (this.finished) return;
    if (!this.upstreamResponded) return;
    if (this.res.writableFinished) return;
    this.ending ??= "upstream_reset";
    this.filter.markFlag("UR");
    this.res.destroy();
    this.finish(this.ending);
  }

  private armConnectTimeout(up: http.ClientRequest, ms: number): void {
    up.on("socket", (socket) => {
      if (!socket.connecting) return;
      const t = setTimeout(() => {
        const e = new Error("connect timeout") as NodeJS.ErrnoException;
        e.code = "ECONNTIMEOUT";
        up.destroy(e);
      }, ms);
      socket.once("connect", () => clearTimeout(t));
      socket.once("close", () => clearTimeout(t));
    });
  }

  private armRouteTimeout(): void {
    if (this.timer || this.route.timeout_ms <= 0) return;
    this.timer = setTimeout(() => this.onRouteTimeout(), this.route.timeout_ms);
  }

  private clearRouteTimeout(): void { if (this.timer) { clearTimeout(this.timer); this.timer = null; } }

  private onRouteTimeout(): void {
    this.timer = null;
    if (this.finished) return;
    this.ending = "timeout";
    this.abortUpstream();
    if (!this.downstreamStarted) {
      this.routerReply("timeout", "UT");
      return;
    }
    this.filter.markFlag("UT");
    this.res.destroy();
    this.finish("timeout");
  }

  private onClientAbort(): void {
    if (this.finished) return;
    this.ending ??= "client_abort";
    if (this.ending === "client_abort") this.filter.markFlag("DC");
    this.abortUpstream();
    this.finish(this.ending);
  }

  private abortUpstream(): void {
    const up = this.upstreamReq;
    this.upstreamReq = null;
    if (up && !up.destroyed) up.destroy();
    this.clearRouteTimeout();
    this.releaseUpstream();
  }

  private releaseUpstream(): void {
    if (this.upstreamAddress === null) return;
    const cluster = this.clusterConfig();
    if (cluster) this.ctx.balancers.get(cluster.name)?.onEnd(this.upstreamAddress);
    this.upstreamAddress = null;
  }

  private finish(kind: StreamEnding): void {
    if (this.finished) return;
    this.finished = true;
    this.clearRouteTimeout();
    this.releaseUpstream();
    const up = this.upstreamReq;
    if (up && !up.destroyed && !this.upstreamResponded) up.destroy();
    this.ctx.stats.active--;
    this.ctx.stats.countEnding(kind);
    this.ctx.stats.routeRecomputed += this.filter.routeRecomputations;
    this.filter.finish(kind);
  }
}
