// The root context of one VM: plugin lifecycle (create/vm_start/configure), ticks, and the
// callouts whose replies arrive on the root context (http_call, Higress redis_call).
// Sources: proxy-wasm-cpp-host src/context.cc (onStart/onConfigure/onTick/onHttpCallResponse,
// setTimerPeriod is per root context); higress-abi.md "Higress imports" (redis replies go to the
// root context id; buffer 9 is readable only inside the callback).
// Configuration updates (audit row 9): Envoy keeps the VM and starts a NEW root context for the new
// plugin configuration (cpp-host WasmBase::start: root contexts are keyed by the plugin key, which
// includes the configuration); new streams go to the new root, the old one keeps its streams
// until they end ("draining"), then gets proxy_on_done and, if that returns true, proxy_on_delete
// (WasmBase::startShutdown; a false return waits for proxy_done).
// Failure behaviour: callbacks into a failed VM are refused (counted by the VM); a reply for a VM
// that failed, or for a deleted root, is dropped.
import { WasmResult } from "./constants.js";
import { HeaderMap } from "./header-map.js";
import type { HttpCalloutResponse } from "./backend.js";
import type { WasmVm } from "./vm.js";

export class RootContext {
  readonly kind = "root" as const;
  /** Properties set through proxy_set_property on the root context. */
  readonly properties = new Map<string, Buffer>();
  /** Visible through buffer 7/6 only during proxy_on_configure / proxy_on_vm_start. */
  pluginConfiguration: Buffer | null = null;
  vmConfiguration: Buffer | null = null;
  /** Visible through buffer 9 only during proxy_on_redis_call_response. */
  redisResponse: Buffer | null = null;
  /** Visible through map 6/7 and buffer 4 only during proxy_on_http_call_response. */
  httpCallResponse: { headers: HeaderMap; body: Buffer; trailers: HeaderMap } | null = null;
  readonly pendingCallouts = new Set<number>();
  tickPeriodMs = 0;
  private cancelTick: (() => void) | null = null;
  /** Streams started under this root and not finished. */
  activeStreams = 0;
  /** Replaced by a newer configuration: ends once its streams have. */
  draining = false;
  /** proxy_on_done ran and returned false: waiting for proxy_done. */
  pendingDone = false;
  deleted = false;

  constructor(readonly id: number, readonly vm: WasmVm) {}

  private get backend() { return this.vm.host.backend; }

  /** proxy_on_context_create(root, 0) then proxy_on_vm_start; false = start refused. */
  start(vmConfiguration: Buffer): boolean {
    this.vm.callback("proxy_on_context_create", this.id, [this.id, 0]);
    if (!this.vm.hasExport("proxy_on_vm_start")) return !this.vm.failed;
    this.vmConfiguration = vmConfiguration;
    let ok = false;
    this.vm.callback("proxy_on_vm_start", this.id, [this.id, vmConfiguration.length], (r) => { ok = r.ok && r.value !== 0; });
    this.vmConfiguration = null;
    return ok;
  }

  /** proxy_on_configure; a missing export counts as accepted (cpp-host). */
  configure(configuration: Buffer): boolean {
    if (this.vm.failed) return false;
    if (!this.vm.hasExport("proxy_on_configure")) return true;
    this.pluginConfiguration = configuration;
    let ok = false;
    this.vm.callback("proxy_on_configure", this.id, [this.id, configuration.length], (r) => { ok = r.ok && r.value !== 0; });
    this.pluginConfiguration = null;
    return ok;
  }

  streamStarted(): void { this.activeStreams++; }

  streamFinished(): void {
    this.activeStreams--;
    if (this.draining && this.activeStreams === 0) this.shutdown();
  }

  /** Replaced by a new root (configuration update): shut down now or when the last stream ends. */
  drain(): void {
    this.draining = true;
    if (this.activeStreams === 0) this.shutdown();
  }

  /** proxy_on_done, then proxy_on_delete unless on_done returned false (then proxy_done deletes). */
  private shutdown(): void {
    if (this.deleted || this.pendingDone) return;
    this.stopTicks();
    if (this.vm.failed) { this.vm.refusedCalls++; this.remove(); return; }
    let done = true;
    if (this.vm.hasExport("proxy_on_done")) {
      this.vm.callback("proxy_on_done", this.id, [this.id], (r) => { done = !r.ok || r.value !== 0; });
    }
    if (done) this.delete(); else this.pendingDone = true;
  }

  /** proxy_done from this root: completes a pending done. */
  completeDone(): boolean {
    if (!this.pendingDone) return false;
    this.pendingDone = false;
    this.vm.deferAfterCall(() => this.delete());
    return true;
  }

  private delete(): void {
    if (!this.vm.failed) this.vm.callback("proxy_on_delete", this.id, [this.id]);
    this.remove();
  }

  private remove(): void {
    this.deleted = true;
    this.pendingCallouts.clear();
    this.vm.contexts.delete(this.id);
  }

  /**
   * proxy_set_tick_period_milliseconds: 0 disables; otherwise proxy_on_tick every period. As
   * Envoy's Wasm::setTickPeriod (source/extensions/common/wasm/wasm.cc): a running timer is
   * disabled and a new one armed at the new period, so a change takes effect at once.
   */
  setTickPeriod(ms: number): void {
    this.cancelTick?.();
    this.cancelTick = null;
    this.tickPeriodMs = ms;
    if (ms > 0) this.armTick();
  }

  private armTick(): void {
    const period = this.tickPeriodMs;
    this.cancelTick = this.backend.schedule(period, () => {
      this.cancelTick = null;
      if (this.vm.failed) { this.vm.refusedCalls++; return; }
      this.vm.callback("proxy_on_tick", this.id, [this.id]);
      // Re-arm unless the guest changed or disabled the period during the tick.
      if (this.tickPeriodMs === period && this.cancelTick === null && period > 0) this.armTick();
    });
  }

  stopTicks(): void { this.cancelTick?.(); this.cancelTick = null; }

  redisCall(cluster: string, query: Buffer): { status: number; token: number } {
    const token = this.vm.allocCalloutToken(3);
    const status = this.backend.redisCall(this.vm.index, cluster, query, (reply) => this.onRedisReply(token, reply));
    if (status !== WasmResult.Ok) return { status, token: 0 };
    this.pendingCallouts.add(token);
    return { status, token };
  }

  private onRedisReply(token: number, reply: Buffer | null): void {
    if (!this.pendingCallouts.delete(token)) return;
    if (this.vm.failed) { this.vm.refusedCalls++; return; }
    // Status 0 Ok / 1 NetworkError (size 0), higress-abi.md.
    this.redisResponse = reply ?? Buffer.alloc(0);
    const args = [this.id, token, reply ? 0 : 1, reply ? reply.length : 0];
    this.vm.callback("proxy_on_redis_call_response", this.id, args, () => { this.redisResponse = null; });
    this.redisResponse = null;
  }

  httpCall(cluster: string, headers: HeaderMap, body: Buffer, trailers: HeaderMap, timeoutMs: number): { status: number; token: number } {
    // Envoy's httpCall requires :method, :path and :authority (BadArgument otherwise).
    if (!headers.has(":method") || !headers.has(":path") || !headers.has(":authority")) {
      return { status: WasmResult.BadArgument, token: 0 };
    }
    const token = this.vm.allocCalloutToken(0);
    const status = this.backend.httpCall(
      { vm: this.vm.index, cluster, headers: headers.pairs(), body, trailers: trailers.pairs(), timeoutMs },
      (res) => this.onHttpReply(token, res),
    );
    if (status !== WasmResult.Ok) return { status, token: 0 };
    this.pendingCallouts.add(token);
    return { status, token };
  }

  private onHttpReply(token: number, res: HttpCalloutResponse | null): void {
    if (!this.pendingCallouts.delete(token)) return;
    if (this.vm.failed) { this.vm.refusedCalls++; return; }
    if (!this.vm.hasExport("proxy_on_http_call_response")) return;
    // Envoy reports a failed/timed-out call as a response with 0 headers, 0 body, 0 trailers.
    const headers = new HeaderMap(res?.headers ?? []);
    const trailers = new HeaderMap(res?.trailers ?? []);
    const body = res?.body ?? Buffer.alloc(0);
    this.httpCallResponse = { headers, body, trailers };
    this.vm.callback("proxy_on_http_call_response", this.id, [this.id, token, headers.count, body.length, trailers.count],
      () => { this.httpCallResponse = null; });
    this.httpCallResponse = null;
  }
}
