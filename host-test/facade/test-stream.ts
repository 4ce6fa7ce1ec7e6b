// One HTTP stream driven by a test, in the manner of proxytest: verbs that feed the filter
// (request headers/body, response headers/body, completion, client abort) and read-outs of what
// it did (headers as forwarded, local reply, override decision, route re-match, properties).
// The router step is emulated here: when request headers leave the filter the upstream is chosen
// (override if Envoy would honour it, else the cluster's hosts round robin); with no eligible
// host the router answers 503 "no healthy upstream" (UH) through the filter's response path.
// Failure behaviour: driving a finished stream is ignored (as Envoy ignores late events).
import { HeaderMap, type HeaderInput } from "../abi/header-map.js";
import type { HttpStream, LocalReply, StreamSink } from "../abi/stream.js";
import { decideUpstream, type UpstreamDecision } from "../abi/upstream-selection.js";
import { getProperty } from "../abi/properties.js";
import type { FacadeBackend } from "./facade-backend.js";

export interface ForwardedRequest {
  headers: Record<string, string>;
  headerList: Array<[string, string]>;
  body: Buffer;
  /** Trailers as forwarded (the request's end), or null when none went. */
  trailers: Record<string, string> | null;
  /** The request's end of stream went upstream. */
  ended: boolean;
  upstream: UpstreamDecision;
}

export interface OverrideOutcome {
  requested: string | null;
  honoured: boolean;
  refusedReason: UpstreamDecision["overrideRefused"];
  /** Calls that came after the request was forwarded (ignored). */
  lateRequests: number;
}

export interface ClientResponse {
  status: number | null;
  headers: Record<string, string>;
  body: Buffer;
  ended: boolean;
  /** Body chunks as they reached the client, in order. */
  chunks: Buffer[];
}

export class TestStream implements StreamSink {
  stream!: HttpStream;
  forwarded: ForwardedRequest | null = null;
  readonly response: ClientResponse = { status: null, headers: {}, body: Buffer.alloc(0), ended: false, chunks: [] };
  /** The local reply as the filter (or the host) asked for it; null when none. */
  localResponse: (Omit<LocalReply, "headers"> & { headers: Record<string, string> }) | null = null;
  resetReason: string | null = null;
  private rr = 0;

  constructor(private readonly backend: FacadeBackend, readonly initialHeaders: HeaderMap) {}

  // ---- verbs ----
  sendRequestHeaders(endStream = false): number | null {
    if (this.stream.request.headers === null) this.stream.start(this.initialHeaders, endStream);
    return this.stream.request.lastAction;
  }

  sendRequestBody(chunk: string | Buffer, endStream: boolean): number | null {
    this.stream.requestData(Buffer.from(chunk), endStream);
    return this.stream.request.lastAction;
  }

  /** HTTP/2 request trailers, after a body sent with endStream false; returns the filter's
   *  trailers status (null: not called, e.g. while it stopped all iteration). */
  sendRequestTrailers(trailers: HeaderInput): number | null {
    this.stream.requestTrailers(HeaderMap.from(trailers));
    return this.stream.request.lastAction;
  }

  sendResponseHeaders(headers: HeaderInput, endStream = false): number | null {
    const h = HeaderMap.from(headers);
    if (!h.has(":status")) h.replace(":status", "200");
    this.stream.responseHeaders(h, endStream);
    return this.stream.response.lastAction;
  }

  sendResponseBody(chunk: string | Buffer, endStream: boolean): number | null {
    this.stream.responseData(Buffer.from(chunk), endStream);
    return this.stream.response.lastAction;
  }

  /** Normal end: proxy_on_done, proxy_on_log, proxy_on_delete. */
  complete(): void { this.stream.finish(this.stream.localReply ? "local_reply" : "complete"); }

  /** Client reset (Envoy flag DC), then done/log/delete. */
  abort(): void {
    if (this.stream.ended) return;
    this.stream.markFlag("DC");
    this.stream.finish("client_abort");
  }

  // ---- read-outs ----
  get requestHeaders(): Record<string, string> { return this.stream.request.headers?.toObject() ?? {}; }
  get overrideHost(): OverrideOutcome {
    return {
      requested: this.stream.overrideHost,
      honoured: this.forwarded?.upstream.via === "override",
      refusedReason: this.forwarded?.upstream.overrideRefused ?? null,
      lateRequests: this.stream.lateOverrideRequests,
    };
  }
  get routeRecomputed(): number { return this.stream.routeRecomputations; }
  get route(): string | null { return this.stream.route; }
  get cluster(): string | null { return this.stream.cluster; }
  get contextId(): number { return this.stream.id; }
  get ended(): string | null { return this.stream.ended; }
  /** Properties the filter wrote with proxy_set_property, as strings. */
  get properties(): Record<string, string> {
    return Object.fromEntries([...this.stream.properties].map(([k, v]) => [k.replace(/\0/g, "."), v.toString("utf8")]));
  }
  /** A property as the guest would read it ('.'-separated path), or null (NotFound). */
  property(path: string): Buffer | null { return getProperty(this.stream, path.split(".").join("\0")); }

  // ---- StreamSink ----
  requestHeadersOut(headers: HeaderMap, endStream: boolean): void {
    const hosts = this.backend.upstreamHosts(this.stream.cluster ?? "");
    const upstream = decideUpstream(this.stream.overrideHost, hosts, (eligible) => (eligible.length ? eligible[this.rr++ % eligible.length] : null));
    this.forwarded = { headers: headers.toObject(), headerList: headers.pairs(), body: Buffer.alloc(0), trailers: null, ended: endStream, upstream };
    if (upstream.address === null) {
      this.stream.hostReply(503, "no_healthy_upstream", "no healthy upstream", "UH");
      return;
    }
    this.stream.upstreamAddress = upstream.address;
  }

  requestDataOut(chunk: Buffer, endStream: boolean): void {
    if (!this.forwarded) return;
    this.forwarded.body = Buffer.concat([this.forwarded.body, chunk]);
    if (endStream) this.forwarded.ended = true;
  }

  requestTrailersOut(trailers: HeaderMap): void {
    if (!this.forwarded) return;
    this.forwarded.trailers = trailers.toObject();
    this.forwarded.ended = true;
  }

  responseHeadersOut(headers: HeaderMap, endStream: boolean): void {
    const status = Number(headers.get(":status"));
    this.response.status = Number.isFinite(status) ? status : null;
    this.response.headers = headers.toObject();
    if (endStream) this.response.ended = true;
  }

  responseDataOut(chunk: Buffer, endStream: boolean): void {
    this.response.chunks.push(chunk);
    this.response.body = Buffer.concat([this.response.body, chunk]);
    if (endStream) this.response.ended = true;
  }

  localReplyStarted(reply: LocalReply): void {
    this.localResponse = { ...reply, headers: reply.headers.toObject() };
  }

  resetRequested(reason: string): void { this.resetReason = reason; }
}
