// @ts-nocheck: AssemblyScript source (compiled by asc, not tsc).
// Raw Proxy-Wasm imports for the tiny test guests (no SDK on purpose: the guests pin host
// behaviour, so they must call the ABI exactly as written). Plus small helpers and `malloc`.

@external("env", "proxy_log") export declare function proxy_log(level: u32, ptr: usize, len: usize): u32;
@external("env", "proxy_get_header_map_value") export declare function proxy_get_header_map_value(t: u32, kp: usize, kl: usize, rp: usize, rl: usize): u32;
@external("env", "proxy_get_header_map_pairs") export declare function proxy_get_header_map_pairs(t: u32, rp: usize, rl: usize): u32;
@external("env", "proxy_get_header_map_size") export declare function proxy_get_header_map_size(t: u32, rp: usize): u32;
@external("env", "proxy_add_header_map_value") export declare function proxy_add_header_map_value(t: u32, kp: usize, kl: usize, vp: usize, vl: usize): u32;
@external("env", "proxy_replace_header_map_value") export declare function proxy_replace_header_map_value(t: u32, kp: usize, kl: usize, vp: usize, vl: usize): u32;
@external("env", "proxy_get_buffer_bytes") export declare function proxy_get_buffer_bytes(t: u32, start: u32, len: u32, rp: usize, rl: usize): u32;
@external("env", "proxy_set_buffer_bytes") export declare function proxy_set_buffer_bytes(t: u32, start: u32, len: u32, dp: usize, dl: usize): u32;
@external("env", "proxy_continue_stream") export declare function proxy_continue_stream(t: u32): u32;
@external("env", "proxy_close_stream") export declare function proxy_close_stream(t: u32): u32;
@external("env", "proxy_send_local_response") export declare function proxy_send_local_response(code: u32, dp: usize, dl: usize, bp: usize, bl: usize, hp: usize, hl: usize, grpc: i32): u32;
@external("env", "proxy_set_effective_context") export declare function proxy_set_effective_context(id: u32): u32;
@external("env", "proxy_get_property") export declare function proxy_get_property(pp: usize, pl: usize, rp: usize, rl: usize): u32;
@external("env", "proxy_set_property") export declare function proxy_set_property(pp: usize, pl: usize, vp: usize, vl: usize): u32;
@external("env", "proxy_set_tick_period_milliseconds") export declare function proxy_set_tick_period_milliseconds(ms: u32): u32;
@external("env", "proxy_get_current_time_nanoseconds") export declare function proxy_get_current_time_nanoseconds(rp: usize): u32;
@external("env", "proxy_define_metric") export declare function proxy_define_metric(t: u32, np: usize, nl: usize, rp: usize): u32;
@external("env", "proxy_increment_metric") export declare function proxy_increment_metric(id: u32, offset: i64): u32;
@external("env", "proxy_http_call") export declare function proxy_http_call(up: usize, ul: usize, hp: usize, hl: usize, bp: usize, bl: usize, tp: usize, tl: usize, timeout: u32, tokp: usize): u32;

@external("env", "proxy_register_shared_queue") export declare function proxy_register_shared_queue(np: usize, nl: usize, tokp: usize): u32;
@external("env", "proxy_resolve_shared_queue") export declare function proxy_resolve_shared_queue(vp: usize, vl: usize, np: usize, nl: usize, tokp: usize): u32;
@external("env", "proxy_enqueue_shared_queue") export declare function proxy_enqueue_shared_queue(tok: u32, dp: usize, dl: usize): u32;
@external("env", "proxy_dequeue_shared_queue") export declare function proxy_dequeue_shared_queue(tok: u32, rp: usize, rl: usize): u32;
@external("wasi_snapshot_preview1", "proc_exit") export declare function wasiTerminate(code: u32): void;

/** Scratch out-params (static, 4-byte aligned). */
export const RET_PTR: usize = memory.data(16, 8);
export const RET_LEN: usize = RET_PTR + 4;

/** The host allocates returned values through this export (cpp-host allocMemory). */
export function malloc(size: usize): usize {
  return heap.alloc(size);
}

export function bytesOf(s: string): ArrayBuffer { return String.UTF8.encode(s); }

export function log(level: u32, msg: string): void {
  const b = bytesOf(msg);
  proxy_log(level, changetype<usize>(b), b.byteLength);
}

export function info(msg: string): void { log(2, msg); }

/** Reads the (ptr, len) the host wrote to the scratch out-params as UTF-8. */
export function retString(): string {
  const len = load<u32>(RET_LEN);
  if (len == 0) return "";
  return String.UTF8.decodeUnsafe(load<u32>(RET_PTR), len);
}

export function clearRet(): void { store<u32>(RET_PTR, 0); store<u32>(RET_LEN, 0); }

export class Got { constructor(public status: u32, public value: string) {} }

export function getHeader(mapType: u32, key: string): Got {
  const k = bytesOf(key);
  clearRet();
  const st = proxy_get_header_map_value(mapType, changetype<usize>(k), k.byteLength, RET_PTR, RET_LEN);
  return new Got(st, st == 0 ? retString() : "");
}

export function addHeader(mapType: u32, key: string, value: string): u32 {
  const k = bytesOf(key); const v = bytesOf(value);
  return proxy_add_header_map_value(mapType, changetype<usize>(k), k.byteLength, changetype<usize>(v), v.byteLength);
}

export function getBuffer(t: u32, start: u32, len: u32): Got {
  clearRet();
  const st = proxy_get_buffer_bytes(t, start, len, RET_PTR, RET_LEN);
  return new Got(st, st == 0 ? retString() : "");
}

/** Property path segments are joined by NUL. */
export function getProperty(dotted: string): Got {
  const p = bytesOf(dotted.replaceAll(".", "\0"));
  clearRet();
  const st = proxy_get_property(changetype<usize>(p), p.byteLength, RET_PTR, RET_LEN);
  return new Got(st, st == 0 ? retString() : "");
}

/** Integer properties are 8-byte little-endian int64. */
export function getIntProperty(dotted: string): string {
  const p = bytesOf(dotted.replaceAll(".", "\0"));
  clearRet();
  const st = proxy_get_property(changetype<usize>(p), p.byteLength, RET_PTR, RET_LEN);
  if (st != 0) return "status:" + st.toString();
  if (load<u32>(RET_LEN) != 8) return "badsize:" + load<u32>(RET_LEN).toString();
  return load<i64>(load<u32>(RET_PTR)).toString();
}

export function setProperty(name: string, value: string): u32 {
  const p = bytesOf(name); const v = bytesOf(value);
  return proxy_set_property(changetype<usize>(p), p.byteLength, changetype<usize>(v), v.byteLength);
}

/** Pair map (u32 n, n x (klen, vlen), key\0value\0...) to "k=v;k=v". */
export function pairsToString(ptr: usize, len: usize): string {
  if (len < 4) return "";
  const n = load<u32>(ptr);
  let out = "";
  let data = ptr + 4 + n * 8;
  for (let i: u32 = 0; i < n; i++) {
    const kl = load<u32>(ptr + 4 + i * 8);
    const vl = load<u32>(ptr + 8 + i * 8);
    const k = String.UTF8.decodeUnsafe(data, kl); data += kl + 1;
    const v = String.UTF8.decodeUnsafe(data, vl); data += vl + 1;
    if (i > 0) out += ";";
    out += k + "=" + v;
  }
  return out;
}

/** Builds a RESP array of bulk strings from space-separated words. */
export function respCommand(words: string): ArrayBuffer {
  const parts = words.split(" ");
  let s = "*" + parts.length.toString() + "\r\n";
  for (let i = 0; i < parts.length; i++) {
    s += "$" + String.UTF8.byteLength(parts[i]).toString() + "\r\n" + parts[i] + "\r\n";
  }
  return bytesOf(s);
}
