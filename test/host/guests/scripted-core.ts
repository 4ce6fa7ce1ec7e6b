// @ts-nocheck: AssemblyScript source (compiled by asc, not tsc).
// Test guest driven by request headers (no SDK): logs every callback and returns the action the
// test asks for, so host flow-control semantics can be pinned. Used with an ABI marker added by
// scripted-100.ts / scripted-020.ts. Configuration: "k=v;k=v" (tick=<ms>, http=<cluster>, reject,
// queue=<name>: registers a shared queue at configure; "x-headers-action: enqueue" with
// "x-queue: <name>" resolves it (this vm_id) and enqueues one item; proxy_on_queue_ready logs and
// drains).
import {
  info, getHeader, addHeader, getBuffer, getProperty, getIntProperty, setProperty, bytesOf, retString,
  RET_PTR, RET_LEN, clearRet, proxy_set_tick_period_milliseconds, proxy_define_metric, proxy_increment_metric,
  proxy_send_local_response, proxy_continue_stream, proxy_close_stream, proxy_set_buffer_bytes, wasiTerminate,
  proxy_http_call, proxy_set_effective_context, proxy_get_buffer_bytes, proxy_get_header_map_size, proxy_replace_header_map_value, proxy_get_header_map_pairs, pairsToString,
  proxy_register_shared_queue, proxy_resolve_shared_queue, proxy_enqueue_shared_queue, proxy_dequeue_shared_queue,
} from "./abi";
export { malloc } from "./abi";

let config = "";
let ticks = 0;
let requestsMetric: u32 = 0;
const bodyActions = new Map<u32, string>();
const respActions = new Map<u32, string>();
const respSets = new Map<u32, string>();
/** "x-trailers-action" per stream: continue | stop | http | continue-inline | local. */
const trailerActions = new Map<u32, string>();
const httpTokens = new Map<u32, u32>();

function cfg(key: string): string {
  const parts = config.split(";");
  for (let i = 0; i < parts.length; i++) {
    const eq = parts[i].indexOf("=");
    if (eq > 0 && parts[i].substring(0, eq) == key) return parts[i].substring(eq + 1);
    if (eq < 0 && parts[i] == key) return "1";
  }
  return "";
}

function mapGet(m: Map<u32, string>, k: u32): string { return m.has(k) ? m.get(k) : ""; }

/** "x-set-header: k=v" / "x-set-resp-header: k=v" may carry %0D / %0A (a client cannot send CR/LF). */
function unescapeCtl(s: string): string { return s.replaceAll("%0D", "\r").replaceAll("%0A", "\n"); }

export function proxy_on_context_create(ctx: u32, parent: u32): void {
  info("create ctx=" + ctx.toString() + " parent=" + parent.toString());
}

export function proxy_on_vm_start(root: u32, size: u32): u32 {
  const vmc = getBuffer(6, 0, size);
  info("vm_start size=" + size.toString() + " vm_config=" + vmc.value);
  return 1;
}

export function proxy_on_configure(root: u32, size: u32): u32 {
  const got = getBuffer(7, 0, size);
  config = got.value;
  info("configure status=" + got.status.toString() + " config=" + config);
  const name = bytesOf("test_requests");
  proxy_define_metric(0, changetype<usize>(name), name.byteLength, RET_PTR);
  requestsMetric = load<u32>(RET_PTR);
  const tick = cfg("tick");
  if (tick.length > 0) proxy_set_tick_period_milliseconds(U32.parseInt(tick));
  const queue = cfg("queue");
  if (queue.length > 0) {
    const q = bytesOf(queue);
    const st = proxy_register_shared_queue(changetype<usize>(q), q.byteLength, RET_PTR);
    info("queue registered status=" + st.toString() + " token=" + load<u32>(RET_PTR).toString() + " root=" + root.toString());
  }
  return cfg("reject") == "1" ? 0 : 1;
}

function enqueue(name: string): void {
  const vm = bytesOf("");
  const q = bytesOf(name);
  store<u32>(RET_PTR, 0);
  const st = proxy_resolve_shared_queue(changetype<usize>(vm), 0, changetype<usize>(q), q.byteLength, RET_PTR);
  const token = load<u32>(RET_PTR);
  const item = bytesOf("x");
  const en = st == 0 ? proxy_enqueue_shared_queue(token, changetype<usize>(item), item.byteLength) : st;
  info("enqueue resolve=" + st.toString() + " token=" + token.toString() + " status=" + en.toString());
}

export function proxy_on_queue_ready(root: u32, token: u32): void {
  let n = 0;
  clearRet();
  while (proxy_dequeue_shared_queue(token, RET_PTR, RET_LEN) == 0) { n++; clearRet(); }
  info("queue_ready root=" + root.toString() + " token=" + token.toString() + " items=" + n.toString());
}

export function proxy_on_tick(root: u32): void {
  ticks++;
  // Buffer 9 (Redis reply) must not be readable outside the Redis callback.
  const b9 = getBuffer(9, 0, 16);
  info("tick " + ticks.toString() + " root=" + root.toString() + " buffer9=" + b9.status.toString());
  if (cfg("tick_stop_after") == ticks.toString()) proxy_set_tick_period_milliseconds(0);
}

function localReply(code: u32, body: string, detailText: string = ""): u32 {
  const details = bytesOf(detailText.length > 0 ? detailText : "test_" + code.toString());
  const b = bytesOf(body);
  // One header pair: x-local: yes
  const hdr = new ArrayBuffer(4 + 8 + 8 + 4);
  const p = changetype<usize>(hdr);
  store<u32>(p, 1); store<u32>(p + 4, 7); store<u32>(p + 8, 3);
  const kv = bytesOf("x-local\0yes\0");
  memory.copy(p + 12, changetype<usize>(kv), 12);
  return proxy_send_local_response(code, changetype<usize>(details), details.byteLength, changetype<usize>(b), b.byteLength, p, 24, -1);
}

function startHttpCall(ctx: u32): u32 {
  // Pair map: :method GET, :path /lookup, :authority svc
  const pairs = "\x03\x00\x00\x00";
  const keys = [":method", ":path", ":authority"];
  const vals = ["GET", "/lookup", "svc"];
  let size = 4 + 8 * 3;
  for (let i = 0; i < 3; i++) size += keys[i].length + vals[i].length + 2;
  const buf = new ArrayBuffer(size);
  const p = changetype<usize>(buf);
  store<u32>(p, 3);
  let off: usize = 4 + 24;
  for (let i = 0; i < 3; i++) {
    store<u32>(p + 4 + i * 8, keys[i].length);
    store<u32>(p + 8 + i * 8, vals[i].length);
    const k = bytesOf(keys[i] + "\0" + vals[i] + "\0");
    memory.copy(p + off, changetype<usize>(k), k.byteLength);
    off += k.byteLength;
  }
  const cluster = bytesOf(cfg("http"));
  const st = proxy_http_call(changetype<usize>(cluster), cluster.byteLength, p, size, 0, 0, 0, 0, 1000, RET_PTR);
  const token = load<u32>(RET_PTR);
  info("http_call status=" + st.toString() + " token=" + token.toString() + pairs.substring(0, 0));
  if (st == 0) httpTokens.set(token, ctx);
  return st;
}

/** Statuses of calls on what a stream does not have: the Downstream / Upstream stream types, the
 *  http-call maps' size, response headers that have not arrived. */
function statusProbe(): void {
  const c2 = proxy_continue_stream(2), c3 = proxy_continue_stream(3), x2 = proxy_close_stream(2), x3 = proxy_close_stream(3);
  const size6 = proxy_get_header_map_size(6, RET_PTR);
  const resp = getHeader(2, ":status").status;
  store<u32>(RET_PTR, 0xdead); store<u32>(RET_LEN, 0xdead);
  const pairs = proxy_get_header_map_pairs(2, RET_PTR, RET_LEN);
  info("probe continue2=" + c2.toString() + " continue3=" + c3.toString() + " close2=" + x2.toString() + " close3=" + x3.toString() +
    " size6=" + size6.toString() + " resp_get=" + resp.toString() + " resp_pairs=" + pairs.toString() + " ptr=" + load<u32>(RET_PTR).toString() +
    " len=" + load<u32>(RET_LEN).toString());
}

export function proxy_on_request_headers(ctx: u32, n: u32, eos: u32): u32 {
  info("request_headers ctx=" + ctx.toString() + " n=" + n.toString() + " eos=" + eos.toString());
  proxy_increment_metric(requestsMetric, 1);
  bodyActions.set(ctx, getHeader(0, "x-body-action").value);
  respActions.set(ctx, getHeader(0, "x-resp-action").value);
  trailerActions.set(ctx, getHeader(0, "x-trailers-action").value);
  if (getHeader(0, "x-route-cache-off").status == 0) info("set clear_route_cache status=" + setProperty("clear_route_cache", "off").toString());
  const limit = getHeader(0, "x-buffer-limit");
  if (limit.status == 0) info("set buffer limit status=" + setProperty("set_decoder_buffer_limit", limit.value).toString());
  const encLimit = getHeader(0, "x-encoder-buffer-limit");
  if (encLimit.status == 0) info("set encoder buffer limit status=" + setProperty("set_encoder_buffer_limit", encLimit.value).toString());
  const sh = getHeader(0, "x-set-header");
  if (sh.status == 0) {
    const v = unescapeCtl(sh.value);
    const eq = v.indexOf("=");
    info("add header status=" + addHeader(0, v.substring(0, eq), v.substring(eq + 1)).toString());
  }
  const rh = getHeader(0, "x-replace-header");
  if (rh.status == 0) {
    const eq = rh.value.indexOf("=");
    const k = bytesOf(rh.value.substring(0, eq)), v = bytesOf(rh.value.substring(eq + 1));
    info("replace header status=" + proxy_replace_header_map_value(0, changetype<usize>(k), k.byteLength, changetype<usize>(v), v.byteLength).toString());
  }
  respSets.set(ctx, unescapeCtl(getHeader(0, "x-set-resp-header").value));
  const props = getHeader(0, "x-log-props");
  if (props.status == 0) {
    const names = props.value.split(",");
    for (let i = 0; i < names.length; i++) {
      const g = getProperty(names[i]);
      info("prop " + names[i] + "=" + (g.status == 0 ? g.value : "status:" + g.status.toString()));
    }
  }
  if (getHeader(0, "x-dump-headers").status == 0) {
    clearRet();
    proxy_get_header_map_pairs(0, RET_PTR, RET_LEN);
    info("headers " + pairsToString(load<u32>(RET_PTR), load<u32>(RET_LEN)));
  }
  if (getHeader(0, "x-status-probe").status == 0) statusProbe();
  const action = getHeader(0, "x-headers-action").value;
  if (action == "stop") return 1;
  if (action == "stopall-buffer") return 3;
  if (action == "stopall-watermark") return 4;
  if (action == "local") { info("local status=" + localReply(403, "denied").toString()); return 1; }
  if (action == "local-then-continue") { localReply(403, "denied"); return 0; }
  if (action == "local-details") { localReply(429, "busy", getHeader(0, "x-details").value); return 1; }
  if (action == "local-twice") {
    info("local status=" + localReply(403, "denied").toString() + " second=" + localReply(429, "again").toString());
    return 1;
  }
  if (action == "exit") { wasiTerminate(1); return 0; }
  if (action == "trap") { unreachable(); }
  if (action == "close") { info("close status=" + proxy_close_stream(0).toString()); return 1; }
  if (action == "continue-inline") { info("continue status=" + proxy_continue_stream(0).toString()); return 1; }
  if (action == "http") { startHttpCall(ctx); return 1; }
  if (action == "enqueue") { enqueue(getHeader(0, "x-queue").value); return 0; }
  return 0;
}

export function proxy_on_request_body(ctx: u32, size: u32, eos: u32): u32 {
  const body = getBuffer(0, 0, size);
  info("request_body ctx=" + ctx.toString() + " size=" + size.toString() + " eos=" + eos.toString() + " body=" + body.value);
  const a = mapGet(bodyActions, ctx);
  if (a == "probe-bounds") {
    // Out-params preset to a sentinel: does the host write them when nothing is copied?
    const starts: u32[] = [size, size + 5, 0];
    const lens: u32[] = [10, 10, 0];
    for (let i = 0; i < 3; i++) {
      store<u32>(RET_PTR, 0xdead); store<u32>(RET_LEN, 0xdead);
      const st = proxy_get_buffer_bytes(0, starts[i], lens[i], RET_PTR, RET_LEN);
      info("probe start=" + starts[i].toString() + " len=" + lens[i].toString() + " status=" + st.toString() +
        " ptr=" + load<u32>(RET_PTR).toString() + " size=" + load<u32>(RET_LEN).toString());
    }
    return 0;
  }
  if (a == "buffer") return 1;
  if (a == "watermark") return 2;
  if (a == "watermark-until-end") return eos ? 0 : 2;
  if (a == "nobuffer") return 3;
  if (a == "buffer-until-end") return eos ? 0 : 1;
  if (a == "continue-at-end") {
    if (eos) info("continue status=" + proxy_continue_stream(0).toString());
    return 1;
  }
  if (a == "rewrite-at-end") {
    if (!eos) return 1;
    const r = bytesOf("REWRITTEN");
    info("set_buffer status=" + proxy_set_buffer_bytes(0, 0, size, changetype<usize>(r), r.byteLength).toString());
    return 0;
  }
  if (a == "local-at-end") {
    if (!eos) return 1;
    localReply(413, "too big");
    return 0;
  }
  return 0;
}

/** Request trailers: logs them (map 1), adds one, and returns what x-trailers-action asks. */
export function proxy_on_request_trailers(ctx: u32, n: u32): u32 {
  clearRet();
  proxy_get_header_map_pairs(1, RET_PTR, RET_LEN);
  info("request_trailers ctx=" + ctx.toString() + " n=" + n.toString() + " trailers " + pairsToString(load<u32>(RET_PTR), load<u32>(RET_LEN)));
  info("trailers add status=" + addHeader(1, "x-added", "yes").toString() + " headers read status=" + getHeader(0, ":path").status.toString());
  const a = mapGet(trailerActions, ctx);
  if (a == "stop") return 1;
  if (a == "http") { startHttpCall(ctx); return 1; }
  if (a == "continue-inline") { info("continue status=" + proxy_continue_stream(0).toString()); return 1; }
  if (a == "local") { localReply(403, "denied"); return 0; }
  if (a == "bad-status") return 7;
  return 0;
}

/** Trailers (map 1) as a later callback sees them, for a stream that sent some. */
function probeTrailers(where: string, ctx: u32): void {
  if (mapGet(trailerActions, ctx).length == 0) return;
  info(where + " trailers read status=" + getHeader(1, "x-t").status.toString() + " add status=" + addHeader(1, "x-late", "1").toString());
}

export function proxy_on_response_headers(ctx: u32, n: u32, eos: u32): u32 {
  probeTrailers("response_headers", ctx);
  const st = getHeader(2, ":status");
  info("response_headers ctx=" + ctx.toString() + " status=" + st.value + " eos=" + eos.toString());
  info("add response header status=" + addHeader(2, "x-filtered", "1").toString());
  const rs = mapGet(respSets, ctx);
  if (rs.length > 0) {
    const eq = rs.indexOf("=");
    info("add response header status=" + addHeader(2, rs.substring(0, eq), rs.substring(eq + 1)).toString());
  }
  // Request headers are no longer writable once forwarded (Envoy drops the mutable map), nor
  // readable (it drops the pointer: getConstMap is null outside the access log).
  info("late request header status=" + addHeader(0, "x-late", "1").toString());
  info("late request header read status=" + getHeader(0, ":path").status.toString());
  const a = mapGet(respActions, ctx);
  if (a == "local") { localReply(500, "response replaced"); return 1; }
  if (a == "stop") return 1;
  return 0;
}

export function proxy_on_response_body(ctx: u32, size: u32, eos: u32): u32 {
  const body = getBuffer(1, 0, size);
  info("response_body ctx=" + ctx.toString() + " size=" + size.toString() + " eos=" + eos.toString() + " body=" + body.value);
  const a = mapGet(respActions, ctx);
  if (a == "buffer") return eos ? 0 : 1;
  if (a == "stop" && eos) { proxy_continue_stream(1); return 0; }
  return 0;
}

export function proxy_on_http_call_response(root: u32, token: u32, nh: u32, bs: u32, nt: u32): void {
  const st = getHeader(6, ":status");
  const body = getBuffer(4, 0, bs);
  info("http_response token=" + token.toString() + " headers=" + nh.toString() + " status=" + st.value + " body=" + body.value);
  info("root continue3=" + proxy_continue_stream(3).toString() + " size6=" + proxy_get_header_map_size(6, RET_PTR).toString());
  if (!httpTokens.has(token)) return;
  const ctx = httpTokens.get(token);
  httpTokens.delete(token);
  const eff = proxy_set_effective_context(ctx);
  info("effective status=" + eff.toString());
  if (eff == 0) probeTrailers("http_response", ctx);
  if (eff == 0) proxy_continue_stream(0);
}

export function proxy_on_done(ctx: u32): u32 {
  info("done ctx=" + ctx.toString());
  return 1;
}

export function proxy_on_log(ctx: u32): void {
  probeTrailers("log", ctx);
  info("log size request=" + proxy_get_header_map_size(0, RET_PTR).toString());
  info("log request header read status=" + getHeader(0, ":path").status.toString() + " response=" + getHeader(2, ":status").status.toString());
  info("log ctx=" + ctx.toString() + " code=" + getIntProperty("response.code") + " flags=" + getIntProperty("response.flags") +
    " details=" + getProperty("response.code_details").value + " upstream=" + getProperty("upstream.address").value);
}

export function proxy_on_delete(ctx: u32): void {
  info("delete ctx=" + ctx.toString());
  bodyActions.delete(ctx);
  respActions.delete(ctx);
  trailerActions.delete(ctx);
  retString();
}
