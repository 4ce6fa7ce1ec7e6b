// env.proxy_* imports for header maps, body buffers and stream control (spec v0.2.1;
// cpp-host src/exports.cc; Envoy context.cc getMap/getBuffer/Buffer::copyFrom/continueStream).
// Failure behaviour: statuses only. Reading an absent map/value is NotFound; writing a map that is
// absent or already passed on (Envoy drops its mutable pointer) is BadArgument.
import { BufferType, HeaderMapType, StreamType, WasmResult } from "../constants.js";
import type { HeaderMap } from "../header-map.js";
import { decodePairs, encodePairs } from "../pairs.js";
import type { RootContext } from "../root-context.js";
import type { HttpStream } from "../stream.js";
import type { WasmVm } from "../vm.js";
import type { ImportTable } from "./types.js";

type Ctx = RootContext | HttpStream;

/** A map Envoy does not hold now (getConstMap returns null: BadArgument outside the access log). */
const RELEASED = "released" as const;

/**
 * The map a read sees. Envoy drops its request-header pointer when on_request_headers returns
 * Continue and on any proxy_continue_stream, its response-header pointer when on_response_headers
 * returns Continue (envoy source/extensions/common/wasm/context.cc decodeHeaders, continueStream,
 * encodeHeaders); in on_log it serves the access log's maps (getConstMap). A map that is not there
 * (released, or not yet received) is RELEASED outside on_log (getHeaderMapValue: BadArgument),
 * null in on_log (NotFound).
 */
function readableMap(ctx: Ctx, type: number): HeaderMap | null | typeof RELEASED {
  const inLog = ctx.kind === "http" && ctx.inLog;
  return constMap(ctx, type) ?? (inLog ? null : RELEASED);
}

function constMap(ctx: Ctx, type: number): HeaderMap | null {
  if (ctx.kind === "root") {
    if (type === HeaderMapType.HttpCallResponseHeaders) return ctx.httpCallResponse?.headers ?? null;
    if (type === HeaderMapType.HttpCallResponseTrailers) return ctx.httpCallResponse?.trailers ?? null;
    return null;
  }
  if (type === HeaderMapType.RequestHeaders) return ctx.inLog || ctx.requestHeadersWritable() ? ctx.request.headers : null;
  // The access log has no request trailers (getConstMap: nullptr in the access log phase).
  if (type === HeaderMapType.RequestTrailers) return ctx.inLog ? null : ctx.requestTrailersMap();
  if (type === HeaderMapType.ResponseHeaders) return ctx.inLog || ctx.responseHeadersWritable() ? ctx.response.headers : null;
  return null;
}

function writableMap(ctx: Ctx, type: number): HeaderMap | null {
  if (ctx.kind === "root") return null; // http-call response maps are read-only
  if (type === HeaderMapType.RequestHeaders) return ctx.requestHeadersWritable() ? ctx.request.headers : null;
  if (type === HeaderMapType.RequestTrailers) return ctx.requestTrailersMap();
  if (type === HeaderMapType.ResponseHeaders) return ctx.responseHeadersWritable() ? ctx.response.headers : null;
  return null;
}

function readableBuffer(ctx: Ctx, type: number): Buffer | null {
  if (ctx.kind === "http") return ctx.buffer(type);
  switch (type) {
    case BufferType.HttpCallResponseBody: return ctx.httpCallResponse?.body ?? null;
    case BufferType.VmConfiguration: return ctx.vmConfiguration;
    case BufferType.PluginConfiguration: return ctx.pluginConfiguration;
    case BufferType.RedisCallResponse: return ctx.redisResponse;
    default: return null;
  }
}

const MAX_MAP_TYPE = HeaderMapType.HttpCallResponseTrailers;
const MAX_BUFFER_TYPE = BufferType.RedisCallResponse;

export function httpImports(vm: WasmVm): ImportTable {
  const mem = vm.memory;
  const active = (): Ctx => vm.activeContext() ?? vm.root;
  const afterWrite = (ctx: Ctx, type: number) => {
    if (ctx.kind === "http" && type === HeaderMapType.RequestHeaders) ctx.onRequestHeadersModified();
  };
  const modify = (type: number, keyPtr: number, keySize: number, op: (m: HeaderMap, key: string) => void) => {
    if (type > MAX_MAP_TYPE) return WasmResult.BadArgument;
    const key = mem.readString(keyPtr, keySize);
    if (key === null) return WasmResult.InvalidMemoryAccess;
    const ctx = active();
    const map = writableMap(ctx, type);
    if (!map) return WasmResult.BadArgument;
    op(map, key);
    afterWrite(ctx, type);
    return WasmResult.Ok;
  };
  const streamOf = (): HttpStream | null => { const c = active(); return c.kind === "http" ? c : null; };

  return {
    proxy_get_header_map_value(type: number, keyPtr: number, keySize: number, retPtrPtr: number, retSizePtr: number) {
      if (type > MAX_MAP_TYPE) return WasmResult.BadArgument;
      const key = mem.readString(keyPtr, keySize);
      if (key === null) return WasmResult.InvalidMemoryAccess;
      const map = readableMap(active(), type);
      if (map === RELEASED) return WasmResult.BadArgument;
      const value = map?.get(key);
      if (value === undefined) return WasmResult.NotFound;
      return mem.copyOut(Buffer.from(value, "utf8"), retPtrPtr, retSizePtr) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
    proxy_get_header_map_pairs(type: number, retPtrPtr: number, retSizePtr: number) {
      if (type > MAX_MAP_TYPE) return WasmResult.BadArgument;
      // Envoy getHeaderMapPairs: Ok whatever the map; one that is not there has no pairs.
      const map = readableMap(active(), type);
      const pairs = map && map !== RELEASED ? map.pairs() : [];
      return mem.copyOut(encodePairs(pairs), retPtrPtr, retSizePtr) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
    proxy_get_header_map_size(type: number, retPtr: number) {
      if (type > MAX_MAP_TYPE) return WasmResult.BadArgument;
      // Envoy getHeaderMapSize reads the stream's own pointer (getMap, as the writes): no access
      // log maps, no http-call maps.
      const map = writableMap(active(), type);
      if (!map) return WasmResult.BadArgument;
      return mem.writeU32(retPtr, map.byteSize) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
    proxy_add_header_map_value(type: number, kp: number, ks: number, vp: number, vs: number) {
      const value = mem.readString(vp, vs);
      if (value === null) return WasmResult.InvalidMemoryAccess;
      return modify(type, kp, ks, (m, k) => m.add(k, value));
    },
    proxy_replace_header_map_value(type: number, kp: number, ks: number, vp: number, vs: number) {
      const value = mem.readString(vp, vs);
      if (value === null) return WasmResult.InvalidMemoryAccess;
      return modify(type, kp, ks, (m, k) => m.replace(k, value));
    },
    proxy_remove_header_map_value(type: number, kp: number, ks: number) {
      return modify(type, kp, ks, (m, k) => m.remove(k));
    },
    proxy_set_header_map_pairs(type: number, ptr: number, size: number) {
      if (type > MAX_MAP_TYPE) return WasmResult.BadArgument;
      const bytes = mem.read(ptr, size);
      if (bytes === null) return WasmResult.InvalidMemoryAccess;
      const ctx = active();
      const map = writableMap(ctx, type);
      if (!map) return WasmResult.BadArgument;
      map.setAll(decodePairs(bytes));
      afterWrite(ctx, type);
      return WasmResult.Ok;
    },
    proxy_get_buffer_bytes(type: number, start: number, length: number, retPtrPtr: number, retSizePtr: number) {
      if (type > MAX_BUFFER_TYPE) return WasmResult.BadArgument;
      const buf = readableBuffer(active(), type);
      if (!buf) return WasmResult.NotFound;
      start >>>= 0; length >>>= 0;
      // cpp-host exports.cc get_buffer_bytes: a start past the end copies nothing (no error; the
      // overflow check cannot trip on 32-bit arguments); nothing to copy is Ok with 0 / 0 written.
      const n = start > buf.length ? 0 : Math.min(length, buf.length - start);
      if (n === 0) return mem.writeU32(retPtrPtr, 0) && mem.writeU32(retSizePtr, 0) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
      return mem.copyOut(buf.subarray(start, start + n), retPtrPtr, retSizePtr) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
    proxy_get_buffer_status(type: number, lengthPtr: number, flagsPtr: number) {
      if (type > MAX_BUFFER_TYPE) return WasmResult.BadArgument;
      const buf = readableBuffer(active(), type);
      if (!buf) return WasmResult.NotFound;
      return mem.writeU32(lengthPtr, buf.length) && mem.writeU32(flagsPtr, 0) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
    proxy_set_buffer_bytes(type: number, start: number, length: number, dataPtr: number, dataSize: number) {
      if (type > MAX_BUFFER_TYPE) return WasmResult.BadArgument;
      const ctx = active();
      const buf = readableBuffer(ctx, type);
      if (!buf) return WasmResult.NotFound;
      const data = mem.read(dataPtr, dataSize);
      if (data === null) return WasmResult.InvalidMemoryAccess;
      // Only the HTTP bodies are mutable; others are read-only views (Envoy Buffer::copyFrom).
      if (ctx.kind !== "http") return WasmResult.NotFound;
      start >>>= 0; length >>>= 0;
      // Envoy: start 0 = drain `length` bytes then prepend; start >= size = append; else BadArgument.
      if (start === 0) ctx.setBuffer(type, Buffer.concat([data, buf.subarray(Math.min(length, buf.length))]));
      else if (start >= buf.length) ctx.setBuffer(type, Buffer.concat([buf, data]));
      else return WasmResult.BadArgument;
      return WasmResult.Ok;
    },
    // Envoy Context::continueStream / closeStream: Downstream and Upstream act on network filter
    // callbacks an HTTP stream or root does not have (continue Upstream is Unimplemented, the
    // others Ok, nothing happens); a root has no stream callbacks either; past Upstream is
    // BadArgument (cpp-host exports.cc).
    proxy_continue_stream(type: number) {
      type >>>= 0;
      if (type > StreamType.Upstream) return WasmResult.BadArgument;
      if (type === StreamType.Upstream) return WasmResult.Unimplemented;
      const s = streamOf();
      return s && type !== StreamType.Downstream ? s.continueStream(type) : WasmResult.Ok;
    },
    proxy_close_stream(type: number) {
      type >>>= 0;
      if (type > StreamType.Upstream) return WasmResult.BadArgument;
      const s = streamOf();
      return s && type <= StreamType.Response ? s.closeStream(type) : WasmResult.Ok;
    },
    proxy_send_local_response(code: number, detailsPtr: number, detailsSize: number, bodyPtr: number, bodySize: number,
      headersPtr: number, headersSize: number) {
      const details = mem.readString(detailsPtr, detailsSize);
      const body = mem.read(bodyPtr, bodySize);
      const headers = mem.read(headersPtr, headersSize);
      if (details === null || body === null || headers === null) return WasmResult.InvalidMemoryAccess;
      const s = streamOf();
      if (!s) return WasmResult.BadArgument; // no stream to answer on a root context
      return s.sendLocalResponse(code >>> 0, details, body, decodePairs(headers));
    },
  };
}
