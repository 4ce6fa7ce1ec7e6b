// The HTTP stream context: when to decide, how to apply a decision, and releasing on every ending.
// - Policies that need the body: headers are held (StopIteration; under ABI 0_2_100 body chunks
//   keep arriving), the body is buffered, the decision is made at end of stream; bodiless
//   requests (GET /v1/models, DELETE, HEAD) never wait for a body that will not come (Higress
//   issue #3740): they pass through, or are balanced from headers (lb_config.bodilessRequests).
// - A decision sets the upstream override host (and optionally a destination header, after
//   clear_route_cache=off so the route is not re-matched: Higress issues #4610/#4615).
// - The lease is released exactly once when the stream ends (on_log, else on_delete), whatever
//   the ending; a failed response (5xx, connect failure) is reported so the host gets a penalty.
// Never traps: every host status is handled, a bad body falls back to plain least request.
import { Context, RootContext, FilterHeadersStatusValues, FilterDataStatusValues } from "@solo-io/proxy-runtime/assembly/index";
import * as host from "../host/calls";
import { Pair } from "../host/pairs";
import { LbConfig } from "../config/lb_config";
import { Policy } from "../policy/policy";
import { Verdict } from "../policy/verdict";
import { Pool } from "../lease/pool";
import { Lease } from "../lease/lease";
import { RequestBody } from "../request/body";
import { LbRoot } from "./root";

const enum Phase { Idle = 0, AwaitBody = 1, Deciding = 2, Decided = 3 }
const CONTINUE: u32 = 0;
const STOP: u32 = 1; // StopIteration (headers) == StopIterationAndBuffer (data)
const STOP_WATERMARK: u32 = 2; // StopIterationAndWatermark (data)

export const PRIORITY_LOW: i32 = -1;
export const PRIORITY_NORMAL: i32 = 0;
export const PRIORITY_HIGH: i32 = 1;

export class LbStream extends Context {
  root: LbRoot;
  cfg: LbConfig | null = null;
  policy: Policy | null = null;
  pool: Pool | null = null;
  route: string = "";
  cluster: string = "";
  body: RequestBody | null = null;
  cost: i64 = 1;
  limit: i64 = 0;
  priority: i32 = PRIORITY_NORMAL;
  leaseId: string = "";
  lease: Lease | null = null;
  pickedHost: string = "";
  reason: string = "";
  load: string = "";
  responseStatus: i32 = 0;
  /** When the pick was applied (ms), for time-to-first-byte observations. */
  private pickedAtMs: f64 = 0;
  private phase: Phase = Phase.Idle;
  private held: bool = false;
  private ended: bool = false;

  constructor(id: u32, root: LbRoot) {
    super(id, root as RootContext);
    this.root = root;
  }

  alive(): bool { return !this.ended; }

  onRequestHeaders(_n: u32, endOfStream: bool): FilterHeadersStatusValues {
    return <FilterHeadersStatusValues>this.requestHeaders(endOfStream);
  }

  private requestHeaders(endOfStream: bool): u32 {
    const route = host.getPropertyString(["route_name"]);
    const cluster = host.getPropertyString(["cluster_name"]);
    const authority = host.getHeader(host.MapType.RequestHeaders, ":authority");
    this.route = route === null ? "" : route;
    this.cluster = cluster === null ? "" : cluster;
    const cfg = this.root.select(this.route, authority === null ? "" : authority, this.cluster);
    if (cfg === null) return CONTINUE;
    const policy = this.root.policyFor(cfg);
    if (policy === null) return CONTINUE;
    this.cfg = cfg;
    this.policy = policy;
    this.pool = this.root.poolFor(cfg, this.route, this.cluster);
    this.priority = this.readPriority(cfg);
    if (!policy.needsBody()) return this.decide(true);
    if (endOfStream) {
      if (cfg.bodilessRequests == "passthrough") { this.root.stats.passed(); return CONTINUE; }
      return this.decide(true);
    }
    this.phase = Phase.AwaitBody;
    this.held = true;
    return STOP;
  }

  onRequestBody(size: usize, endOfStream: bool): FilterDataStatusValues {
    return <FilterDataStatusValues>this.requestBody(size, endOfStream);
  }

  private requestBody(size: usize, endOfStream: bool): u32 {
    if (this.phase == Phase.Deciding) return STOP_WATERMARK;
    if (this.phase != Phase.AwaitBody) return CONTINUE;
    const cfg = this.cfg!;
    if (!endOfStream) {
      if (<i64>size <= cfg.maxBodyBytes) return STOP;
      // Too large to buffer: decide without the body (cost from size only), let the rest flow.
      this.body = new RequestBody(new Uint8Array(0), true);
      this.cost = this.costOf(cfg, <i64>size);
      const v = this.decide(false);
      return v == STOP ? STOP_WATERMARK : v;
    }
    const bytes = host.getBufferBytes(host.BufferType.RequestBody, 0, <u32>size);
    this.body = new RequestBody(bytes === null ? new Uint8Array(0) : Uint8Array.wrap(bytes), bytes === null);
    return this.decide(false);
  }

  /** Runs the policy; returns the filter action for the current callback. */
  private decide(inHeaders: bool): u32 {
    const cfg = this.cfg!;
    if (this.body !== null && !this.body!.truncated) this.cost = this.costOf(cfg, <i64>this.body!.length);
    this.limit = this.limitFor(cfg);
    this.phase = Phase.Deciding;
    const v = this.policy!.decide(this);
    if (v == Verdict.Pending) {
      this.held = true;
      return STOP;
    }
    this.phase = Phase.Decided;
    this.held = false;
    if (v == Verdict.Picked) {
      this.apply();
      return CONTINUE;
    }
    if (v == Verdict.Rejected) return STOP;
    this.root.stats.passed();
    return CONTINUE;
  }

  private costOf(cfg: LbConfig, bodyLength: i64): i64 {
    if (cfg.costMode == "bytes") return bodyLength > 0 ? bodyLength : 1;
    if (cfg.costMode == "tokens") {
      const b = this.body;
      const t = b !== null && !b.truncated ? b.estimatedTokens() : (bodyLength + 3) / 4;
      return t > 0 ? t : 1;
    }
    return 1;
  }

  private readPriority(cfg: LbConfig): i32 {
    if (cfg.priorityHeader.length == 0) return PRIORITY_NORMAL;
    const v = host.getHeader(host.MapType.RequestHeaders, cfg.priorityHeader);
    if (v === null) return PRIORITY_NORMAL;
    if (v == cfg.highPriorityValue) return PRIORITY_HIGH;
    if (v == cfg.lowPriorityValue) return PRIORITY_LOW;
    return PRIORITY_NORMAL;
  }

  /** The load limit for this request: none for high priority, a fraction of it for low. */
  private limitFor(cfg: LbConfig): i64 {
    if (cfg.maxRequestCount <= 0 || this.priority == PRIORITY_HIGH) return 0;
    if (this.priority == PRIORITY_LOW) {
      const l = <i64>Math.floor(<f64>cfg.maxRequestCount * cfg.lowPriorityFraction);
      return l > 0 ? l : 1;
    }
    return cfg.maxRequestCount;
  }

  /** Applies pickedHost to the current (effective) stream. */
  private apply(): void {
    const cfg = this.cfg!;
    const h = this.pickedHost;
    if (cfg.destinationHeader.length > 0) {
      host.setProperty(["clear_route_cache"], "off");
      host.replaceHeader(host.MapType.RequestHeaders, cfg.destinationHeader, h);
    }
    this.pickedAtMs = host.nowMillis();
    const st = host.setUpstreamOverrideHost(h);
    if (st != host.Status.Ok) {
      this.root.stats.overrideRefusedOne();
      host.log(host.LogLevel.Warn, "override host " + h + " refused with status " + st.toString());
    }
    if (cfg.detailLog) host.log(host.LogLevel.Info, "picked " + h + " reason=" + this.reason + " load=" + this.load + " cost=" + this.cost.toString());
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
    if (v == Verdict.Picked) this.resumeWith(this.pickedHost, this.reason, this.load);
    else if (v == Verdict.Pass) this.resumePass();
    else if (v == Verdict.Rejected) { this.phase = Phase.Decided; this.held = false; }
    // Pending: another callback (the lease) resumes the stream.
  }

  /** Async decision (from a Redis reply on the root context). */
  resumeWith(h: string, reason: string, load: string): void {
    if (!this.enter()) return;
    this.phase = Phase.Decided;
    this.pickedHost = h;
    this.reason = reason;
    this.load = load;
    this.apply();
    this.continueHeld();
  }

  resumePass(): void {
    if (!this.enter()) return;
    this.phase = Phase.Decided;
    this.root.stats.passed();
    this.continueHeld();
  }

  resumeShed(load: string): void {
    if (!this.enter()) return;
    this.phase = Phase.Decided;
    this.held = false;
    this.shed(load);
  }

  /** Answers 429/503 at once with Retry-After (no upstream request is made). */
  shed(load: string): void {
    const cfg = this.cfg!;
    this.reason = "shed";
    this.load = load;
    this.root.stats.shedOne();
    const headers: Pair[] = [new Pair("retry-after", cfg.retryAfterSeconds.toString()), new Pair("content-type", "application/json")];
    if (cfg.debugHeader.length > 0) headers.push(new Pair(cfg.debugHeader, "reason=shed;load=" + load));
    host.sendLocalResponse(cfg.shedStatus, "llmlb_shed",
      "{\"error\":{\"message\":\"all upstream hosts are at capacity, retry later\",\"type\":\"overloaded\",\"code\":" + cfg.shedStatus.toString() + "}}",
      headers);
  }

  onResponseHeaders(_n: u32, _endOfStream: bool): FilterHeadersStatusValues {
    const s = host.getHeader(host.MapType.ResponseHeaders, ":status");
    if (s !== null) this.responseStatus = I32.parseInt(s);
    if (this.pickedHost.length > 0 && this.pickedAtMs > 0) this.root.onFirstByte(this.pickedHost, host.nowMillis() - this.pickedAtMs);
    const cfg = this.cfg;
    if (cfg !== null && cfg.debugHeader.length > 0 && this.pickedHost.length > 0) {
      host.replaceHeader(host.MapType.ResponseHeaders, cfg.debugHeader,
        "host=" + this.pickedHost + ";reason=" + this.reason + (this.load.length > 0 ? ";load=" + this.load : ""));
    }
    return FilterHeadersStatusValues.Continue;
  }

  /** 5xx from the upstream or from Envoy (connect failure, reset, timeout) counts as failed. */
  private failed(): bool {
    let status = this.responseStatus;
    if (status == 0) {
      const code = host.getPropertyString(["response", "code"]);
      if (code !== null) status = I32.parseInt(code);
    }
    // 0 = no response at all (client abort): not the host's fault, no penalty.
    return status >= 500;
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    const lease = this.lease;
    if (lease !== null && !lease.released) this.root.accounting.release(lease, this.failed());
  }

  onDone(): bool { return true; }
  onLog(): void { this.finish(); }
  onDelete(): void { this.finish(); }
}
