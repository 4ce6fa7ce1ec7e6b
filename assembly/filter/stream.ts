// The HTTP stream context: when to decide, how to apply a decision, and releasing on every ending.
// - Policies that need the body: headers are held (StopIteration; under ABI 0_2_100 body chunks
//   keep arriving); each chunk is copied here and held by Envoy with StopIterationAndWatermark,
//   the decision is made at end of stream. Copying chunk by chunk reads the body right under both
//   Envoy body views (before 1.32 the buffered view lacks the current chunk: envoy #35884), and
//   the stream's buffer limit is raised to maxBodyBytes (Higress's `set_decoder_buffer_limit`)
//   so Higress's 32 KiB default neither answers 413 nor stops reading before the end; a body over
//   maxBodyBytes is balanced from its size alone and flows on (host-test/README.md rows 1, 5).
//   Request trailers (HTTP/2) end the body instead (its last chunk is not end of stream): the
//   decision is made there, and they are held while it is pending, since Envoy's Continue from
//   them would send the stopped request upstream. Bodiless
//   requests (GET /v1/models, DELETE, HEAD) never wait for a body that will not come (Higress
//   issue #3740): they pass through, or are balanced from headers (lb_config.bodilessRequests).
// - A decision sets the upstream override host (and optionally a destination header, after
//   clear_route_cache=off so the route is not re-matched: Higress issues #4610/#4615).
// - The lease is released exactly once when the stream ends (on_log, else on_delete), whatever
//   the ending; a failed response (5xx, connect failure) is reported so the host gets a penalty.
// Never traps: every host status is handled, a bad body falls back to plain least request.
import { Context, RootContext, FilterHeadersStatusValues, FilterDataStatusValues, FilterTrailersStatusValues } from "@solo-io/proxy-runtime/assembly/index";
import * as host from "../host/calls";
import { Pair } from "../host/pairs";
import { LbConfig } from "../config/lb_config";
import { Policy } from "../policy/policy";
import { Verdict } from "../services/request/verdict";
import { RequestBody } from "../services/request/body";
import { LbRequest, StreamPort, PRIORITY_HIGH, PRIORITY_LOW, PRIORITY_NORMAL } from "../services/request/request";
import { Plugin } from "./plugin";

const enum Phase { Idle = 0, AwaitBody = 1, Deciding = 2, Decided = 3 }
const CONTINUE: u32 = 0;
const STOP: u32 = 1; // StopIteration (headers, trailers) == StopIterationAndBuffer (data)
const STOP_WATERMARK: u32 = 2; // StopIterationAndWatermark (data)

/** The stream's side of StreamPort: what policies and accounting call to report a decision. */
class Port extends StreamPort {
  constructor(private s: LbStream) { super(); }
  alive(): bool { return this.s.alive(); }
  enterAsync(): bool { return this.s.enterAsync(); }
  finishAsync(v: Verdict): void { this.s.finishAsync(v); }
  resumeWith(h: string, reason: string, load: string): void { this.s.resumeWith(h, reason, load); }
  resumePass(): void { this.s.resumePass(); }
  resumeShed(load: string): void { this.s.resumeShed(load); }
  admitted(): void { this.s.onAdmitted(); }
  shed(load: string): void { this.s.shed(load); }
}

export class LbStream extends Context {
  plugin: Plugin;
  cfg: LbConfig | null = null;
  policy: Policy | null = null;
  /** The request record policies see; set once a rule with a policy matched. */
  req: LbRequest | null = null;
  responseStatus: i32 = 0;
  private phase: Phase = Phase.Idle;
  private held: bool = false;
  private ended: bool = false;
  private responseBodySeen: bool = false;
  /** Body chunks copied so far (AwaitBody) and their total size. */
  private chunks: Uint8Array[] = [];
  private received: i64 = 0;
  private unreadable: bool = false;

  constructor(id: u32, root: RootContext, plugin: Plugin) {
    super(id, root);
    this.plugin = plugin;
  }

  alive(): bool { return !this.ended; }

  onRequestHeaders(_n: u32, endOfStream: bool): FilterHeadersStatusValues {
    return <FilterHeadersStatusValues>this.requestHeaders(endOfStream);
  }

  private requestHeaders(endOfStream: bool): u32 {
    const routeName = host.getPropertyString(["route_name"]);
    const clusterName = host.getPropertyString(["cluster_name"]);
    const authority = host.getHeader(host.MapType.RequestHeaders, ":authority");
    const route = routeName === null ? "" : routeName;
    const cluster = clusterName === null ? "" : clusterName;
    const cfg = this.plugin.select(route, authority === null ? "" : authority, cluster);
    if (cfg === null) return CONTINUE;
    const policy = this.plugin.policyFor(cfg);
    if (policy === null) return CONTINUE;
    this.cfg = cfg;
    this.policy = policy;
    const r = new LbRequest(cfg, new Port(this), this.plugin.services.candidates);
    this.req = r;
    r.route = route;
    r.cluster = cluster;
    r.pool = this.plugin.poolFor(cfg, route, cluster);
    r.priority = this.readPriority(cfg);
    if (!policy.needsBody()) return this.decide(true);
    if (endOfStream) {
      if (cfg.bodilessRequests == "passthrough") { this.plugin.stats.passed(cfg.policy); return CONTINUE; }
      return this.decide(true);
    }
    this.phase = Phase.AwaitBody;
    this.held = true;
    host.setProperty(["set_decoder_buffer_limit"], cfg.maxBodyBytes.toString());
    return STOP;
  }

  onRequestBody(size: usize, endOfStream: bool): FilterDataStatusValues {
    return <FilterDataStatusValues>this.requestBody(size, endOfStream);
  }

  private requestBody(size: usize, endOfStream: bool): u32 {
    if (this.phase == Phase.Deciding) return STOP_WATERMARK;
    if (this.phase != Phase.AwaitBody) return CONTINUE;
    const cfg = this.cfg!;
    const r = this.req!;
    // Watermark leaves nothing buffered for the filter: `size` is this chunk in every Envoy version.
    const total = this.received + <i64>size;
    if (total > cfg.maxBodyBytes) {
      // Too large to balance by content: decide from the size alone, let the rest flow.
      this.chunks = [];
      r.body = new RequestBody(new Uint8Array(0), true);
      r.cost = costOf(cfg, r.body, total);
      return dataAction(this.decide(false));
    }
    if (size > 0) {
      const bytes = host.getBufferBytes(host.BufferType.RequestBody, 0, <u32>size);
      if (bytes === null) this.unreadable = true;
      else this.chunks.push(Uint8Array.wrap(bytes));
    }
    this.received = total;
    if (!endOfStream) return STOP_WATERMARK;
    return dataAction(this.bodyEnded());
  }

  /**
   * Trailers end the request (HTTP/2: the body's last chunk came with end_of_stream false). While
   * awaiting the body they are its end; while a decision is pending they wait for it
   * (StopIteration until proxy_continue_stream): Continue would resume the held request.
   */
  onRequestTrailers(_n: u32): FilterTrailersStatusValues {
    if (this.phase == Phase.AwaitBody) return <FilterTrailersStatusValues>this.bodyEnded();
    if (this.phase == Phase.Deciding) return FilterTrailersStatusValues.StopIteration;
    return FilterTrailersStatusValues.Continue;
  }

  /** The body is complete (end of stream, or trailers): decide on it; returns the decision's status. */
  private bodyEnded(): u32 {
    this.req!.body = new RequestBody(joinChunks(this.chunks, this.received), this.unreadable);
    this.chunks = [];
    return this.decide(false);
  }

  /** Runs the policy; returns the filter action for the current callback. */
  private decide(inHeaders: bool): u32 {
    const cfg = this.cfg!;
    const r = this.req!;
    const body = r.body;
    if (body !== null && !body.truncated) r.cost = costOf(cfg, body, <i64>body.length);
    r.limit = limitFor(cfg, r.priority);
    this.phase = Phase.Deciding;
    // Gateway-side queueing (services/queue): take a pool slot first, or wait for one.
    if (cfg.queue.capacity > 0 && r.pool !== null) {
      const services = this.plugin.services;
      if (services.queue.enter(r, services.accounting.newLeaseId() + "q") == Verdict.Pending) {
        this.held = true;
        this.plugin.adjustTick(host.nowMillis()); // the enter waits at most the pick deadline
        return STOP;
      }
    }
    const v = this.policy!.decide(r);
    if (v == Verdict.Pending) {
      this.held = true;
      this.plugin.adjustTick(host.nowMillis());
      return STOP;
    }
    this.decided();
    this.held = false;
    if (v == Verdict.Picked) {
      this.apply();
      return CONTINUE;
    }
    if (v == Verdict.Rejected) return STOP;
    this.plugin.stats.passed(cfg.policy);
    return CONTINUE;
  }

  private readPriority(cfg: LbConfig): i32 {
    if (cfg.priorityHeader.length == 0) return PRIORITY_NORMAL;
    const v = host.getHeader(host.MapType.RequestHeaders, cfg.priorityHeader);
    if (v === null) return PRIORITY_NORMAL;
    if (v == cfg.highPriorityValue) return PRIORITY_HIGH;
    if (v == cfg.lowPriorityValue) return PRIORITY_LOW;
    return PRIORITY_NORMAL;
  }

  /**
   * The decision is final: the request body (bytes and parsed JSON, up to maxBodyBytes) is not
   * needed any more and goes now, not when the stream ends: a streamed answer can last minutes,
   * and the VM's memory would otherwise hold every open stream's request body.
   */
  private decided(): void {
    this.phase = Phase.Decided;
    const r = this.req;
    if (r !== null) r.body = null;
  }

  /** Applies pickedHost to the current (effective) stream. */
  private apply(): void {
    const cfg = this.cfg!;
    const r = this.req!;
    const h = r.pickedHost;
    if (cfg.destinationHeader.length > 0) {
      host.setProperty(["clear_route_cache"], "off");
      host.replaceHeader(host.MapType.RequestHeaders, cfg.destinationHeader, h);
    }
    r.pickedAtMs = host.nowMillis();
    this.plugin.stats.picked(cfg.policy, r.reason);
    const st = host.setUpstreamOverrideHost(h);
    if (st != host.Status.Ok) {
      this.plugin.stats.overrideRefusedOne();
      host.log(host.LogLevel.Warn, "override host " + h + " refused with status " + st.toString());
    }
    if (cfg.detailLog) host.log(host.LogLevel.Info, "picked " + h + " reason=" + r.reason + " load=" + r.load + " cost=" + r.cost.toString());
  }

  private enter(): bool {
    if (this.ended) return false;
    return host.setEffectiveContext(this.context_id) == host.Status.Ok;
  }

  private continueHeld(): void {
    if (!this.held) return;
    this.held = false;
    host.continueRequest();
  }

  /** Before acting on this stream from a root callback: false when it is gone. */
  enterAsync(): bool { return this.enter(); }

  /** Ends an async decision whose verdict came from the policy (a Redis reply on the root). */
  finishAsync(v: Verdict): void {
    const r = this.req!;
    if (v == Verdict.Picked) this.resumeWith(r.pickedHost, r.reason, r.load);
    else if (v == Verdict.Pass) this.resumePass();
    else if (v == Verdict.Rejected) { this.decided(); this.held = false; }
    // Pending: another callback (the lease) resumes the stream.
  }

  /** The admission queue let this request in (a Redis reply on the root): decide now. */
  onAdmitted(): void {
    if (!this.enter()) return;
    this.finishAsync(this.policy!.decide(this.req!));
  }

  /** Async decision (from a Redis reply on the root context). */
  resumeWith(h: string, reason: string, load: string): void {
    if (!this.enter()) return;
    this.decided();
    const r = this.req!;
    r.pickedHost = h;
    r.reason = reason;
    r.load = load;
    this.apply();
    this.continueHeld();
  }

  resumePass(): void {
    if (!this.enter()) return;
    this.decided();
    this.plugin.stats.passed(this.cfg!.policy);
    this.continueHeld();
  }

  resumeShed(load: string): void {
    if (!this.enter()) return;
    this.decided();
    this.held = false;
    this.shed(load);
  }

  /** Answers 429/503 at once with Retry-After (no upstream request is made). */
  shed(load: string): void {
    const cfg = this.cfg!;
    const r = this.req!;
    r.reason = "shed";
    r.load = load;
    this.plugin.stats.shed(r.priority);
    const headers: Pair[] = [new Pair("retry-after", cfg.retryAfterSeconds.toString()), new Pair("content-type", "application/json")];
    if (cfg.debugHeader.length > 0) headers.push(new Pair(cfg.debugHeader, "reason=shed;load=" + load));
    host.sendLocalResponse(cfg.shedStatus, "llmlb_shed",
      "{\"error\":{\"message\":\"all upstream hosts are at capacity, retry later\",\"type\":\"overloaded\",\"code\":" + cfg.shedStatus.toString() + "}}",
      headers);
  }

  onResponseHeaders(_n: u32, _endOfStream: bool): FilterHeadersStatusValues {
    const s = host.getHeader(host.MapType.ResponseHeaders, ":status");
    if (s !== null) this.responseStatus = I32.parseInt(s);
    const r = this.req;
    if (r === null) return FilterHeadersStatusValues.Continue;
    this.noteServedHost();
    if (r.pickedHost.length > 0 && r.pickedAtMs > 0 && !r.servedElsewhere()) this.plugin.onFirstByte(r.pickedHost, host.nowMillis() - r.pickedAtMs);
    const cfg = r.cfg;
    if (cfg.debugHeader.length > 0 && r.pickedHost.length > 0) {
      host.replaceHeader(host.MapType.ResponseHeaders, cfg.debugHeader,
        "host=" + r.pickedHost + ";reason=" + r.reason + (r.load.length > 0 ? ";load=" + r.load : "")
        + (r.servedElsewhere() ? ";served=" + r.servedHost : ""));
    }
    this.policy!.onResponseHeaders(r, this.responseStatus);
    return FilterHeadersStatusValues.Continue;
  }

  onResponseBody(size: usize, endOfStream: bool): FilterDataStatusValues {
    const r = this.req;
    const policy = this.policy;
    if (r !== null && policy !== null) {
      if (!this.responseBodySeen && (size > 0 || endOfStream)) {
        this.responseBodySeen = true;
        policy.onFirstResponseBody(r);
      }
      if (policy.wantsResponseBody()) {
        const bytes = size > 0 ? host.getBufferBytes(host.BufferType.ResponseBody, 0, <u32>size) : null;
        policy.onResponseBody(r, bytes === null ? new Uint8Array(0) : Uint8Array.wrap(bytes), endOfStream);
      }
    }
    return FilterDataStatusValues.Continue;
  }

  /**
   * Where Envoy sent the request (`upstream.address`, set when the router chose a host: also
   * on a connect failure) once the response starts or the stream ends; on a host other than the
   * pick the lease moves there (Accounting.moveLease). Only after an override host was set: the
   * cluster policies route by header, their upstream is a pod of the chosen service.
   */
  private noteServedHost(): void {
    const r = this.req;
    if (r === null || r.servedKnown || r.pickedAtMs <= 0) return;
    r.servedKnown = true;
    const a = host.getPropertyString(["upstream", "address"]);
    r.servedHost = a === null ? "" : a;
    if (r.servedElsewhere()) this.plugin.services.accounting.moveLease(r, r.servedHost);
  }

  /**
   * 5xx from the upstream or from Envoy (connect failure, reset, timeout) counts as failed for
   * `leased`, when it is the host Envoy sent the request to: not when no upstream host was chosen
   * (a local reply), nor when another host served it (a lease not moved yet: that host's failure
   * is not the pick's). A lease moved to the serving host (moveLease) takes that host's failures.
   */
  private failed(leased: string): bool {
    const r = this.req;
    if (r !== null && r.pickedAtMs > 0 && (r.servedHost.length == 0 || r.servedHost != leased)) return false;
    let status = <i64>this.responseStatus;
    // response.code is an int64 property (audit row 11).
    if (status == 0) status = host.getPropertyI64(["response", "code"], 0);
    // 0 = no response at all (client abort): not the host's fault, no penalty.
    return status >= 500;
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    const r = this.req;
    if (r === null) return;
    this.noteServedHost();
    if (r.servedHost.length > 0) r.failedOnServed = this.failed(r.servedHost);
    const lease = r.lease;
    if (lease !== null && !lease.released) this.plugin.services.accounting.release(lease, this.failed(lease.host));
    this.plugin.services.accounting.cancelAcquire(r);
    this.plugin.services.queue.leave(r);
    this.policy!.onStreamDone(r);
  }

  onDone(): bool { return true; }
  onLog(): void { this.finish(); }
  onDelete(): void { this.finish(); }
}

/** A decision's status as a data status: holding is StopIterationAndWatermark (never Buffer). */
function dataAction(v: u32): u32 { return v == STOP ? STOP_WATERMARK : v; }

function joinChunks(chunks: Uint8Array[], total: i64): Uint8Array {
  if (chunks.length == 1) return chunks[0];
  const out = new Uint8Array(<i32>total);
  let at = 0;
  for (let i = 0; i < chunks.length; i++) {
    out.set(chunks[i], at);
    at += chunks[i].length;
  }
  return at == <i32>total ? out : out.subarray(0, at);
}

function costOf(cfg: LbConfig, b: RequestBody | null, bodyLength: i64): i64 {
  if (cfg.costMode == "bytes") return bodyLength > 0 ? bodyLength : 1;
  if (cfg.costMode == "tokens") {
    const t = b !== null && !b.truncated ? b.estimatedTokens() : (bodyLength + 3) / 4;
    return t > 0 ? t : 1;
  }
  return 1;
}

/** The load limit for this request: none for high priority, a fraction of it for low. */
function limitFor(cfg: LbConfig, priority: i32): i64 {
  if (cfg.maxRequestCount <= 0 || priority == PRIORITY_HIGH) return 0;
  if (priority == PRIORITY_LOW) {
    const l = <i64>Math.floor(<f64>cfg.maxRequestCount * cfg.lowPriorityFraction);
    return l > 0 ? l : 1;
  }
  return cfg.maxRequestCount;
}
