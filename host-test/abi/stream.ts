// One HTTP stream through the Wasm filter: its Proxy-Wasm context (proxy_on_context_create ...
// proxy_on_delete), both directions' flow control, local replies, close/reset, the upstream
// override request, route re-matching, and the stream facts exposed as properties.
// Sources: Envoy source/extensions/common/wasm/context.cc (decodeHeaders/encodeHeaders,
// sendLocalResponse and continueStream are deferred until the VM call returns, failStream sends a
// 503 "wasm_fail_stream" when fail_open is false); proxy-wasm-cpp-host src/context.cc (onDone,
// onLog, onDelete order); proxy-wasm/spec PR #73 + Envoy PR #36809 (a local reply runs through the
// sending filter's response callbacks); higress-abi.md (override host, clear_route_cache).
// Failure behaviour: never throws; a failed VM fails the stream closed (503) unless failOpen.
import { BufferType, ResponseFlag, StreamType, TrailersAction, WasmResult, type ResponseFlagName } from "./constants.js";
import { convertDataStatus, convertHeadersStatus, convertTrailersStatus } from "./abi-version.js";
import { DirectionFlow, type FlowHooks } from "./stream-flow.js";
import { HeaderMap } from "./header-map.js";
import type { WasmVm } from "./vm.js";
import type { RootContext } from "./root-context.js";

export type StreamEnding =
  | "complete" | "client_abort" | "upstream_connect_failure" | "upstream_reset" | "timeout"
  | "local_reply" | "no_healthy_upstream" | "filter_reset" | "vm_failure";

export interface LocalReply {
  status: number;
  details: string;
  /** Headers as the filter produced them (before its own response callbacks ran). */
  headers: HeaderMap;
  body: Buffer;
  /** True when the host itself answered (VM failure, buffer limit), not the filter. */
  byHost: boolean;
}

/** Where the filter's output goes: the facade records it, the gateway does real I/O. */
export interface StreamSink {
  requestHeadersOut(headers: HeaderMap, endStream: boolean): void;
  requestDataOut(chunk: Buffer, endStream: boolean): void;
  /** Request trailers passed on (the request's end). Only the facade sends trailers (HTTP/2): the
   *  gateway's HTTP/1 listener drops them, as Envoy's HTTP/1 codec does by default. */
  requestTrailersOut?(trailers: HeaderMap): void;
  responseHeadersOut(headers: HeaderMap, endStream: boolean): void;
  responseDataOut(chunk: Buffer, endStream: boolean): void;
  /** A local reply replaces the upstream exchange: abandon any upstream request. */
  localReplyStarted(reply: LocalReply): void;
  /** The stream must be reset (proxy_close_stream, or a reply impossible after the response began). */
  resetRequested(reason: string): void;
}

export interface StreamFacts {
  route: string | null;
  cluster: string | null;
  sourceAddress: string;
  destinationAddress: string;
  protocol: string;
  startTimeMs: number;
}

const EMPTY = Buffer.alloc(0);

/** Envoy local reply headers: :status, the extra headers, then content-length/-type for a body. */
export function localReplyHeaders(status: number, extra: ReadonlyArray<readonly [string, string]>, body: Buffer): HeaderMap {
  const headers = new HeaderMap([[":status", String(status)]]);
  for (const [k, v] of extra) headers.add(k, v);
  if (body.length > 0) {
    headers.replace("content-length", String(body.length));
    if (!headers.has("content-type")) headers.add("content-type", "text/plain");
  }
  return headers;
}

export class HttpStream {
  readonly kind = "http" as const;
  readonly id: number;
  request: DirectionFlow;
  response: DirectionFlow;
  /** Properties written with proxy_set_property (Envoy keeps them in the stream's filter state). */
  readonly properties = new Map<string, Buffer>();
  route: string | null;
  cluster: string | null;
  upstreamAddress: string | null = null;
  responseCode: number | null = null;
  codeDetails: string | null = null;
  responseFlags = 0;
  /** Last address passed to proxy_set_upstream_override_host while it could still matter. */
  overrideHost: string | null = null;
  /** The stream's buffer limit, one for both directions (Envoy FilterManager::buffer_limit_). */
  bufferLimit: number;
  /** Override requests that arrived after the request had been forwarded (ignored, like Envoy). */
  lateOverrideRequests = 0;
  /** Route re-matches caused by request header changes (Higress clear_route_cache). */
  routeRecomputations = 0;
  localReply: LocalReply | null = null;
  /** The filter called proxy_send_local_response (Envoy local_reply_hold_). */
  private localReplyRequested = false;
  ended: StreamEnding | null = null;
  private contextCreated = false;
  private requestHeadersFrozen = false;
  /** Envoy's request_trailers_ pointer: set for on_request_trailers, kept while they are held. */
  private requestTrailersHeld = false;
  /** In proxy_on_log: reads see the access log's maps (Envoy getConstMap). */
  inLog = false;
  private started = false;
  /** The root context (plugin configuration) this stream was created under. */
  readonly parentRoot: RootContext;

  constructor(readonly vm: WasmVm, private readonly sink: StreamSink, readonly facts: StreamFacts) {
    this.id = vm.allocContextId();
    this.parentRoot = vm.root;
    this.route = facts.route;
    this.cluster = facts.cluster;
    this.bufferLimit = vm.host.options.profile.bufferLimitBytes;
    this.request = this.newFlow("request");
    this.response = this.newFlow("response");
  }

  private get host() { return this.vm.host; }

  private newFlow(dir: "request" | "response"): DirectionFlow {
    const isReq = dir === "request";
    const hooks: FlowHooks = {
      callHeaders: (n, eos) => this.callFilter(isReq ? "proxy_on_request_headers" : "proxy_on_response_headers", [n, eos ? 1 : 0], "headers"),
      callData: (size, eos) => this.callFilter(isReq ? "proxy_on_request_body" : "proxy_on_response_body", [size, eos ? 1 : 0], "data"),
      headersOut: (h, eos) => (isReq ? this.sink.requestHeadersOut(h, eos) : this.onResponseHeadersOut(h, eos)),
      dataOut: (c, eos) => (isReq ? this.sink.requestDataOut(c, eos) : this.onResponseDataOut(c, eos)),
      // Response trailers are not emulated (README "Not emulated").
      ...(isReq ? { callTrailers: (n: number) => this.callRequestTrailers(n), trailersOut: (t: HeaderMap) => this.sink.requestTrailersOut?.(t) } : {}),
      // Envoy: over the buffer limit -> 413 on the request path, 500 on the response path.
      overLimit: () => (isReq
        ? this.hostReply(413, "request_payload_too_large", "Payload Too Large")
        : this.hostReply(500, "response_payload_too_large", "Internal Server Error")),
      vmFailed: () => this.failStream(isReq ? "request" : "response"),
      bufferLimit: () => this.bufferLimit,
    };
    return new DirectionFlow(hooks, this.host.options.profile.bodyView);
  }

  private onResponseHeadersOut(h: HeaderMap, eos: boolean): void {
    const status = Number(h.get(":status"));
    if (Number.isFinite(status)) this.responseCode = status;
    this.sink.responseHeadersOut(h, eos);
    if (eos) this.responseEnded();
  }

  private onResponseDataOut(chunk: Buffer, eos: boolean): void {
    this.sink.responseDataOut(chunk, eos);
    if (eos) this.responseEnded();
  }

  /**
   * The response's end of stream reached the codec: Envoy ends the stream now, whether or not the
   * request was complete (a reset then), so the access log and on_done / on_delete run at once
   * (conn_manager_impl.cc ActiveStream::endStream -> doEndStream -> doDeferredStreamDestroy;
   * with expand_agnostic_stream_lifetime, on by default, once the codec finished encoding it:
   * at once on HTTP/1, when the frames left on HTTP/2). No callback for this stream comes later.
   */
  private responseEnded(): void {
    this.finish(this.localReply ? "local_reply" : "complete");
  }

  /**
   * Calls a stream callback; returns the converted action, null if the VM failed (fail closed),
   * or Continue when the export is missing / the plugin fails open (cpp-host CHECK_FAIL_HTTP).
   */
  private callFilter(name: string, args: number[], kind: "headers" | "data" | "trailers"): number | null {
    const cont = 0; // Continue, in each of the three status enums
    if (this.vm.failed) {
      this.vm.refusedCalls++;
      return this.host.options.failOpen ? cont : null;
    }
    if (!this.vm.hasExport(name)) return cont;
    let action: number | null = cont;
    this.vm.callback(name, this.id, [this.id, ...args], (r, stopNext) => {
      if (!r.ok) { action = this.host.options.failOpen ? cont : null; return; }
      action = kind === "headers" ? convertHeadersStatus(r.value, this.vm.abi, stopNext)
        : kind === "data" ? convertDataStatus(r.value, stopNext) : convertTrailersStatus(r.value, stopNext);
    });
    return action;
  }

  /** Envoy Context::decodeTrailers: the map is the filter's during the call and, if it returns
   *  StopIteration, until proxy_continue_stream (context.cc decodeTrailers, continueStream). */
  private callRequestTrailers(n: number): number | null {
    this.requestTrailersHeld = true;
    const action = this.callFilter("proxy_on_request_trailers", [n], "trailers");
    if (action !== TrailersAction.StopIteration) this.requestTrailersHeld = false;
    return action;
  }

  /** Creates the guest context (proxy_on_context_create(id, root)) and runs request headers. */
  start(headers: HeaderMap, endStream: boolean): void {
    this.vm.contexts.set(this.id, this);
    this.started = true;
    this.parentRoot.streamStarted();
    if (!this.vm.failed) {
      this.vm.callback("proxy_on_context_create", this.id, [this.id, this.parentRoot.id]);
      this.contextCreated = true;
    }
    this.vm.withDeferredActions(() => this.request.onHeaders(headers, endStream));
  }

  requestData(chunk: Buffer, endStream: boolean): void {
    if (!this.ended) this.vm.withDeferredActions(() => this.request.onData(chunk, endStream));
  }

  /** Request trailers (HTTP/2): the request's end, after data sent with endStream false. */
  requestTrailers(trailers: HeaderMap): void {
    if (!this.ended) this.vm.withDeferredActions(() => this.request.onTrailers(trailers));
  }

  responseHeaders(headers: HeaderMap, endStream: boolean): void {
    if (this.ended || this.localReply) return;
    const status = Number(headers.get(":status"));
    if (Number.isFinite(status)) this.responseCode = status;
    this.vm.withDeferredActions(() => this.response.onHeaders(headers, endStream));
  }

  responseData(chunk: Buffer, endStream: boolean): void {
    if (this.ended || this.localReply) return;
    this.vm.withDeferredActions(() => this.response.onData(chunk, endStream));
  }

  // ---- called by imports (effective context = this stream) ----

  /** proxy_continue_stream: deferred until the current VM call returns (Envoy addAfterVmCallAction). */
  continueStream(type: number): number {
    if (type !== StreamType.Request && type !== StreamType.Response) return WasmResult.BadArgument;
    // Envoy drops its request-header pointer as soon as continue is called, for either direction
    // (Context::continueStream nulls request_headers_ after its switch).
    this.requestHeadersFrozen = true;
    this.requestTrailersHeld = false; // request_trailers_ too
    this.vm.deferAfterCall(() => {
      if (this.ended) return;
      (type === StreamType.Request ? this.request : this.response).continue();
    });
    return WasmResult.Ok;
  }

  /** proxy_close_stream: Envoy resets the whole HTTP stream (deferred like continue). */
  closeStream(type: number): number {
    if (type !== StreamType.Request && type !== StreamType.Response) return WasmResult.BadArgument;
    this.vm.deferAfterCall(() => {
      if (this.ended) return;
      this.request.closed = true;
      this.response.closed = true;
      this.markFlag("LR");
      this.sink.resetRequested("close_stream");
    });
    return WasmResult.Ok;
  }

  /**
   * proxy_send_local_response: stops the current iteration now, replies after the call returns.
   * Only the filter's first call replies: Envoy's Context::sendLocalResponse refuses any later one
   * (local_reply_hold_), and cpp-host's export ignores that status and answers Ok
   * (exports.cc send_local_response), still stopping the iteration.
   */
  sendLocalResponse(status: number, details: string, body: Buffer, headers: Array<[string, string]>): number {
    this.vm.stopNextIteration = true;
    if (this.localReplyRequested) return WasmResult.Ok;
    this.localReplyRequested = true;
    // Envoy passes the details through StringUtil::replaceAllEmptySpace (context.cc).
    const cleanDetails = details.replace(/[ \t\f\v\n\r]/g, "_");
    this.vm.deferAfterCall(() => this.localResponse(status, cleanDetails, body, headers, false));
    return WasmResult.Ok;
  }

  /**
   * Host-originated reply (buffer limit, or the router's 503/504 for upstream failures): it runs
   * through the filter's response callbacks like any local reply (Envoy router sendLocalReply).
   */
  hostReply(status: number, details: string, body: string, flag?: ResponseFlagName): void {
    if (flag) this.markFlag(flag);
    this.localResponse(status, details, Buffer.from(body), [], true);
  }

  /**
   * Envoy DownstreamFilterManager::sendLocalReply (filter_manager.cc): before any response
   * headers, the reply runs through the filter chain, this filter's response callbacks included;
   * once response headers reached the filter manager but not the client (a filter holds them, or
   * is encoding them), it goes straight to the codec (sendDirectLocalReply: no filter sees it);
   * after headers left for the client, the stream can only be reset.
   */
  private localResponse(status: number, details: string, body: Buffer, extra: Array<[string, string]>, byHost: boolean): void {
    if (this.ended) return;
    if (this.response.headersReleased) {
      this.request.closed = true;
      this.response.closed = true;
      this.markFlag("LR");
      this.sink.resetRequested("local_reply_after_response_started");
      return;
    }
    const direct = this.response.headers !== null;
    const headers = localReplyHeaders(status, extra, body);
    this.localReply = { status, details, headers: headers.clone(), body, byHost };
    this.codeDetails = details;
    this.responseCode = status;
    this.request.closed = true;
    this.sink.localReplyStarted(this.localReply);
    if (direct) {
      this.response.closed = true;
      this.onResponseHeadersOut(headers, body.length === 0);
      if (body.length > 0) this.onResponseDataOut(body, true);
      return;
    }
    this.response = this.newFlow("response");
    this.response.onHeaders(headers, body.length === 0);
    if (body.length > 0) this.response.onData(body, true);
  }

  /** VM failure: fail closed with 503 (Envoy failStream) unless the plugin fails open. */
  private failStream(dir: "request" | "response"): void {
    if (this.ended) return;
    if (dir === "response" || this.response.headersReleased || this.localReply) {
      this.request.closed = true;
      this.response.closed = true;
      this.sink.resetRequested("wasm_fail_stream");
      return;
    }
    const headers = new HeaderMap([[":status", "503"]]);
    this.localReply = { status: 503, details: "wasm_fail_stream", headers: headers.clone(), body: EMPTY, byHost: true };
    this.codeDetails = "wasm_fail_stream";
    this.responseCode = 503;
    this.request.closed = true;
    this.response.closed = true;
    this.sink.localReplyStarted(this.localReply);
    this.onResponseHeadersOut(headers, true);
  }

  /** proxy_set_upstream_override_host: only effective before the router picks a host. */
  setOverrideHost(address: string): number {
    if (this.request.headersReleased) { this.lateOverrideRequests++; return WasmResult.Ok; }
    this.overrideHost = address;
    return WasmResult.Ok;
  }

  /** Whether Envoy still holds the request headers (it drops its pointer once they pass on):
   *  reads and writes both need it, except reads in on_log. */
  requestHeadersWritable(): boolean {
    return !this.requestHeadersFrozen && !this.request.headersReleased && !this.request.closed;
  }

  /** The request trailers while Envoy's filter holds their pointer (null otherwise). */
  requestTrailersMap(): HeaderMap | null {
    return this.requestTrailersHeld && !this.request.closed ? this.request.trailers : null;
  }

  /** Whether Envoy still holds the response headers (as requestHeadersWritable). */
  responseHeadersWritable(): boolean {
    return !this.response.headersReleased && !this.response.closed;
  }

  /**
   * After the filter changed request headers: unless property `clear_route_cache` is "off", the
   * Higress fork clears the route cache and the route is matched again with the new headers.
   */
  onRequestHeadersModified(): void {
    const flag = this.properties.get("clear_route_cache");
    if (flag && flag.toString() === "off") return;
    this.recomputeRoute();
  }

  recomputeRoute(): void {
    if (!this.request.headers) return;
    const match = this.host.backend.matchRoute(this.request.headers);
    this.routeRecomputations++;
    if (match === undefined) return;
    this.route = match?.route ?? null;
    this.cluster = match?.cluster ?? null;
  }

  /** Body/headers visible for a buffer type on this stream (null = NotFound). */
  buffer(type: number): Buffer | null {
    if (type === BufferType.HttpRequestBody) return this.request.visibleBody();
    if (type === BufferType.HttpResponseBody) return this.response.visibleBody();
    return null;
  }

  setBuffer(type: number, next: Buffer): void {
    if (type === BufferType.HttpRequestBody) this.request.replaceVisibleBody(next);
    else if (type === BufferType.HttpResponseBody) this.response.replaceVisibleBody(next);
  }

  /**
   * Higress's set_decoder_buffer_limit / set_encoder_buffer_limit properties: the value is the
   * limit in decimal ASCII (wasm-go SetRequestBodyBufferLimit writes strconv.Itoa); it applies to
   * this stream's later buffering. Text that is not a decimal u32 changes nothing. Either one
   * sets the stream's single limit, both directions (higress-group/envoy envoy-1.27
   * filter_manager.cc: setDecoderBufferLimit and setEncoderBufferLimit both call
   * FilterManager::setBufferLimit). Not emulated: Envoy re-checks data already buffered against a
   * lowered limit at once (WatermarkBuffer::setWatermarks); here the next chunk does.
   */
  setBufferLimitProperty(value: Buffer): void {
    const text = value.toString("latin1");
    if (!/^\d{1,10}$/.test(text) || Number(text) > 0xffffffff) return;
    this.bufferLimit = Number(text);
  }

  markFlag(flag: ResponseFlagName): void { this.responseFlags |= ResponseFlag[flag]; }

  flagNames(): ResponseFlagName[] {
    return (Object.keys(ResponseFlag) as ResponseFlagName[]).filter((k) => (this.responseFlags & ResponseFlag[k]) !== 0);
  }

  /**
   * Ends the stream, each callback exactly once whatever the ending. HTTP/1 and HTTP/2 (profile
   * endOrder "log-first"): envoy ConnectionManagerImpl::doDeferredStreamDestroy runs the access
   * log first (wasm Context::log -> proxy_on_log), then destroyFilters (Context::onDestroy ->
   * proxy_on_done, proxy_on_delete). HTTP/3 with deferred logging ("deferred-log"): on_done,
   * on_delete, and only then on_log, for a context the guest has already deleted.
   * The context is unknown to set_effective_context once on_delete has run.
   */
  finish(kind: StreamEnding): void {
    if (this.ended) return;
    this.ended = kind;
    this.request.closed = true;
    this.response.closed = true;
    const order = this.host.options.profile.endOrder === "deferred-log"
      ? ["proxy_on_done", "proxy_on_delete", "proxy_on_log"]
      : ["proxy_on_log", "proxy_on_done", "proxy_on_delete"];
    for (const name of order) {
      if (!this.contextCreated) break;
      if (this.vm.failed) { this.vm.refusedCalls++; continue; }
      this.inLog = name === "proxy_on_log";
      try {
        this.vm.callback(name, this.id, [this.id]);
      } finally {
        this.inLog = false;
      }
      if (name === "proxy_on_delete") this.vm.contexts.delete(this.id);
    }
    this.vm.contexts.delete(this.id);
    if (this.started) this.parentRoot.streamFinished();
  }
}
