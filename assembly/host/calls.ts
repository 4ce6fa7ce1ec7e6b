// Non-aborting wrappers around the Proxy-Wasm host calls the plugin uses.
// The SDK's helpers abort the VM (CHECK_RESULT -> proc_exit) on any non-Ok status, e.g. a missing
// property; on the request path every status must be handled, so these return null / the status.
import { MonoClock } from "./mono_clock";
import * as raw from "@solo-io/proxy-runtime/assembly/imports";
import * as higress from "./higress";
import { Pair, serializePairs } from "./pairs";

export const enum Status {
  Ok = 0, NotFound = 1, BadArgument = 2, InvalidMemoryAccess = 6, Empty = 7, CasMismatch = 8,
  InternalFailure = 10, Unimplemented = 12,
}
export const enum MapType { RequestHeaders = 0, RequestTrailers = 1, ResponseHeaders = 2 }
export const enum BufferType { RequestBody = 0, ResponseBody = 1, HttpCallResponseBody = 4, PluginConfiguration = 7, RedisCallResponse = 9 }
export const enum LogLevel { Trace = 0, Debug = 1, Info = 2, Warn = 3, Error = 4, Critical = 5 }

/** Out-parameters (pointer + size) the host writes; the host allocates through our `malloc`. */
class OutParams {
  ptr: usize = 0;
  size: usize = 0;
  word: u32 = 0;
  wide: u64 = 0;
}
const out = new OutParams();
const OUT_PTR = changetype<usize>(out) + offsetof<OutParams>("ptr");
const OUT_SIZE = changetype<usize>(out) + offsetof<OutParams>("size");
const OUT_WORD = changetype<usize>(out) + offsetof<OutParams>("word");
const OUT_WIDE = changetype<usize>(out) + offsetof<OutParams>("wide");

function resetOut(): void {
  out.ptr = 0;
  out.size = 0;
}

/** Takes ownership of the buffer the host allocated with `malloc` (pinned there; unpinned here). */
function takeOut(): ArrayBuffer {
  const p = out.ptr;
  const n = out.size;
  out.ptr = 0;
  out.size = 0;
  if (p == 0) return new ArrayBuffer(0);
  const buf = changetype<ArrayBuffer>(p);
  __unpin(p);
  // The allocation may be larger than what the host wrote.
  return <usize>buf.byteLength == n ? buf : buf.slice(0, <i32>n);
}

function utf8(s: string): ArrayBuffer {
  return String.UTF8.encode(s);
}

// ---- logging -------------------------------------------------------------------------------
/** Below this the plugin does not call the host (Envoy filters by its own wasm log level too). */
const logThreshold: LogLevel = LogLevel.Info;
export function log(level: LogLevel, message: string): void {
  if (level < logThreshold) return;
  const b = utf8("[ai-load-balancer] " + message);
  raw.proxy_log(<usize>level, changetype<usize>(b), b.byteLength);
}

// ---- time ----------------------------------------------------------------------------------
export function nowNanos(): u64 {
  out.wide = 0;
  raw.proxy_get_current_time_nanoseconds(OUT_WIDE);
  return out.wide;
}
const clock = new MonoClock();
/** Milliseconds on a clock that never goes backwards (mono_clock.ts): Envoy's wall clock's forward
 *  steps only. */
export function nowMillis(): f64 { return clock.read(<f64>(nowNanos() / 1000000)); }
/** How far nowMillis runs ahead of the wall clock (shared_clock.ts). */
export function clockOffset(): f64 { return clock.offset(); }
/** Runs nowMillis `ms` ahead of the wall clock, if that is ahead of it now (shared_clock.ts). */
export function adoptClockOffset(ms: f64): void { clock.adoptOffset(ms); }

// ---- properties ----------------------------------------------------------------------------
/** Path segments are joined with NUL, as the ABI expects. Returns null when not Ok. */
export function getProperty(path: string[]): ArrayBuffer | null {
  const p = utf8(path.join("\0"));
  resetOut();
  const st = raw.proxy_get_property(changetype<usize>(p), p.byteLength, OUT_PTR, OUT_SIZE);
  if (st != Status.Ok) { takeOut(); return null; }
  return takeOut();
}
/**
 * An integer property as Envoy serialises it: 8 bytes, little-endian int64 (e.g. response.code,
 * response.flags). `fallback` when absent or of another size.
 */
export function getPropertyI64(path: string[], fallback: i64): i64 {
  const b = getProperty(path);
  if (b === null || b.byteLength != 8) return fallback;
  return load<i64>(changetype<usize>(b));
}
export function getPropertyString(path: string[]): string | null {
  const b = getProperty(path);
  return b === null ? null : String.UTF8.decode(b);
}
export function setProperty(path: string[], value: string): u32 {
  const p = utf8(path.join("\0"));
  const v = utf8(value);
  return raw.proxy_set_property(changetype<usize>(p), p.byteLength, changetype<usize>(v), v.byteLength);
}

// ---- header maps ---------------------------------------------------------------------------
export function getHeader(map: MapType, name: string): string | null {
  const k = utf8(name);
  resetOut();
  const st = raw.proxy_get_header_map_value(map, changetype<usize>(k), k.byteLength, OUT_PTR, OUT_SIZE);
  if (st != Status.Ok) { takeOut(); return null; }
  return String.UTF8.decode(takeOut());
}
/** The raw bytes of a header's value (Envoy allows bytes that are not UTF-8); null when absent. */
export function getHeaderBytes(map: MapType, name: string): ArrayBuffer | null {
  const k = utf8(name);
  resetOut();
  const st = raw.proxy_get_header_map_value(map, changetype<usize>(k), k.byteLength, OUT_PTR, OUT_SIZE);
  const out = takeOut();
  return st == Status.Ok ? out : null;
}
export function replaceHeader(map: MapType, name: string, value: string): u32 {
  const k = utf8(name);
  const v = utf8(value);
  return raw.proxy_replace_header_map_value(map, changetype<usize>(k), k.byteLength, changetype<usize>(v), v.byteLength);
}

// ---- buffers -------------------------------------------------------------------------------
export function getBufferBytes(type: BufferType, start: u32, length: u32): ArrayBuffer | null {
  resetOut();
  const st = raw.proxy_get_buffer_bytes(type, start, length, OUT_PTR, OUT_SIZE);
  if (st != Status.Ok) { takeOut(); return null; }
  return takeOut();
}

// ---- stream control ------------------------------------------------------------------------
export function continueRequest(): u32 { return raw.proxy_continue_stream(0); }
export function setEffectiveContext(contextId: u32): u32 { return raw.proxy_set_effective_context(contextId); }
export function sendLocalResponse(status: u32, details: string, body: string, headers: Pair[]): u32 {
  const d = utf8(details);
  const b = utf8(body);
  const h = serializePairs(headers);
  return raw.proxy_send_local_response(status, changetype<usize>(d), d.byteLength, changetype<usize>(b), b.byteLength,
    changetype<usize>(h), h.byteLength, -1);
}

// ---- timers, metrics, shared data ----------------------------------------------------------
export function setTickPeriod(ms: u32): u32 { return raw.proxy_set_tick_period_milliseconds(ms); }

export const enum MetricType { Counter = 0, Gauge = 1, Histogram = 2 }
/** Returns the metric id, or u32.MAX_VALUE when the host refused the definition. */
export function defineMetric(type: MetricType, name: string): u32 {
  const n = utf8(name);
  out.word = 0;
  const st = raw.proxy_define_metric(type, changetype<usize>(n), n.byteLength, OUT_WORD);
  return st == Status.Ok ? out.word : u32.MAX_VALUE;
}
export function incrementMetric(id: u32, delta: i64): void {
  if (id != u32.MAX_VALUE) raw.proxy_increment_metric(id, delta);
}
export function recordMetric(id: u32, value: u64): void {
  if (id != u32.MAX_VALUE) raw.proxy_record_metric(id, value);
}

export class SharedValue {
  constructor(public status: u32, public value: ArrayBuffer, public cas: u32) {}
}
export function getSharedData(key: string): SharedValue {
  const k = utf8(key);
  resetOut();
  out.word = 0;
  const st = raw.proxy_get_shared_data(changetype<usize>(k), k.byteLength, OUT_PTR, OUT_SIZE, OUT_WORD);
  const value = takeOut();
  return new SharedValue(st, value, out.word);
}
export function setSharedData(key: string, value: ArrayBuffer, cas: u32): u32 {
  const k = utf8(key);
  return raw.proxy_set_shared_data(changetype<usize>(k), k.byteLength, changetype<usize>(value), value.byteLength, cas);
}

// ---- shared queues (cpp-host src/shared_queue.cc) ------------------------------------------
/** Registers (or re-binds to this root context) the queue `name` of this VM's vm_id; its
 *  proxy_on_queue_ready comes to the registering root context. 0 when refused. */
export function registerSharedQueue(name: string): u32 {
  const n = utf8(name);
  out.word = 0;
  const st = raw.proxy_register_shared_queue(changetype<usize>(n), n.byteLength, OUT_WORD);
  return st == Status.Ok ? out.word : 0;
}
/** The token of the queue `name` of this plugin's vm_id (empty vm_id: the caller's); 0 when none. */
export function resolveSharedQueue(name: string): u32 {
  const v = utf8("");
  const n = utf8(name);
  out.word = 0;
  const st = raw.proxy_resolve_shared_queue(changetype<usize>(v), 0, changetype<usize>(n), n.byteLength, OUT_WORD);
  return st == Status.Ok ? out.word : 0;
}
export function enqueueSharedQueue(token: u32, data: ArrayBuffer): u32 {
  return raw.proxy_enqueue_shared_queue(token, changetype<usize>(data), data.byteLength);
}
/** One item off the queue; null when it is empty (or gone). */
export function dequeueSharedQueue(token: u32): ArrayBuffer | null {
  resetOut();
  const st = raw.proxy_dequeue_shared_queue(token, OUT_PTR, OUT_SIZE);
  if (st != Status.Ok) { takeOut(); return null; }
  return takeOut();
}

// ---- outbound calls ------------------------------------------------------------------------
export class CallStart {
  constructor(public status: u32, public token: u32) {}
}
export function httpCall(cluster: string, headers: Pair[], body: ArrayBuffer, timeoutMs: u32): CallStart {
  const c = utf8(cluster);
  const h = serializePairs(headers);
  const t = serializePairs(new Array<Pair>());
  out.word = 0;
  const st = raw.proxy_http_call(changetype<usize>(c), c.byteLength, changetype<usize>(h), h.byteLength,
    changetype<usize>(body), body.byteLength, changetype<usize>(t), t.byteLength, timeoutMs, OUT_WORD);
  return new CallStart(st, out.word);
}

// ---- Higress extensions --------------------------------------------------------------------
export function redisInit(cluster: string, user: string, password: string, timeoutMs: u32): u32 {
  const c = utf8(cluster);
  const u = utf8(user);
  const p = utf8(password);
  return higress.proxy_redis_init(changetype<usize>(c), c.byteLength, changetype<usize>(u), u.byteLength,
    changetype<usize>(p), p.byteLength, timeoutMs);
}
export function redisCall(cluster: string, query: Uint8Array): CallStart {
  const c = utf8(cluster);
  out.word = 0;
  const st = higress.proxy_redis_call(changetype<usize>(c), c.byteLength, query.dataStart, query.byteLength, OUT_WORD);
  return new CallStart(st, out.word);
}
/** The routed cluster's hosts as a pair map (ip:port -> JSON); null when absent or empty. */
export function getUpstreamHosts(): ArrayBuffer | null {
  resetOut();
  const st = higress.proxy_get_upstream_hosts(OUT_PTR, OUT_SIZE);
  if (st != Status.Ok) { takeOut(); return null; }
  const b = takeOut();
  return b.byteLength == 0 ? null : b;
}
export function setUpstreamOverrideHost(address: string): u32 {
  const a = utf8(address);
  return higress.proxy_set_upstream_override_host(changetype<usize>(a), a.byteLength);
}
