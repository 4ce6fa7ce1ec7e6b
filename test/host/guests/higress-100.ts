// @ts-nocheck: AssemblyScript source (compiled by asc, not tsc).
// Test guest for the Higress extensions (0_2_100): Redis calls answered on the root context and
// acted upon through set_effective_context, upstream host listing, override host.
// Configuration: "redis=<cluster>;user=<u>;pass=<p>;timeout=<ms>" (redis_init at configure,
// user/pass optional, timeout 1000 by default, bare or inside a JSON string value). Request
// headers drive it: x-redis-reinit (redis_init again, same settings), x-redis-cmd "INCR k" (call,
// then hold headers), x-after-redis continue|local|override:<addr>|none|call:<cmd> (the last
// sends <cmd> from the reply callback, then continues on its reply),
// x-override <addr> (pin now), x-hosts (log get_upstream_hosts), x-late-override <addr> (pin in
// response headers, too late).
import { info, getHeader, getBuffer, bytesOf, RET_PTR, RET_LEN, clearRet, pairsToString, respCommand,
  proxy_continue_stream, proxy_set_effective_context, proxy_send_local_response } from "./abi";
export { malloc } from "./abi";

@external("env", "proxy_redis_init") declare function proxy_redis_init(cp: usize, cl: usize, up: usize, ul: usize, pp: usize, pl: usize, timeout: u32): u32;
@external("env", "proxy_redis_call") declare function proxy_redis_call(cp: usize, cl: usize, qp: usize, ql: usize, tokp: usize): u32;
@external("env", "proxy_get_upstream_hosts") declare function proxy_get_upstream_hosts(rp: usize, rl: usize): u32;
@external("env", "proxy_set_upstream_override_host") declare function proxy_set_upstream_override_host(ap: usize, al: usize): u32;

let redisCluster = "";
const tokenToCtx = new Map<u32, u32>();
const afterRedis = new Map<u32, string>();
const lateOverride = new Map<u32, string>();

export function proxy_abi_version_0_2_100(): void {}

let redisUser = "";
let redisPass = "";
let redisTimeout: u32 = 1000;

/** `key=value` from the configuration; the value ends at ';', '"' or the end. */
function cfgValue(cfg: string, key: string): string {
  const at = cfg.indexOf(key + "=");
  if (at < 0) return "";
  let end = cfg.length;
  const semi = cfg.indexOf(";", at);
  const quote = cfg.indexOf("\"", at);
  if (semi >= 0 && semi < end) end = semi;
  if (quote >= 0 && quote < end) end = quote;
  return cfg.substring(at + key.length + 1, end);
}

function redisInit(): void {
  const c = bytesOf(redisCluster); const u = bytesOf(redisUser); const p = bytesOf(redisPass);
  const st = proxy_redis_init(changetype<usize>(c), c.byteLength, changetype<usize>(u), u.byteLength, changetype<usize>(p), p.byteLength, redisTimeout);
  info("redis_init status=" + st.toString());
}

export function proxy_on_configure(root: u32, size: u32): u32 {
  const cfg = getBuffer(7, 0, size).value;
  redisCluster = cfgValue(cfg, "redis");
  redisUser = cfgValue(cfg, "user");
  redisPass = cfgValue(cfg, "pass");
  const timeout = cfgValue(cfg, "timeout");
  if (timeout.length > 0) redisTimeout = U32.parseInt(timeout);
  if (redisCluster.length > 0) redisInit();
  return 1;
}

function pinHost(addr: string): u32 {
  const a = bytesOf(addr);
  return proxy_set_upstream_override_host(changetype<usize>(a), a.byteLength);
}

export function proxy_on_request_headers(ctx: u32, n: u32, eos: u32): u32 {
  info("request_headers ctx=" + ctx.toString() + " eos=" + eos.toString());
  const late = getHeader(0, "x-late-override");
  if (late.status == 0) lateOverride.set(ctx, late.value);
  if (getHeader(0, "x-hosts").status == 0) {
    clearRet();
    const st = proxy_get_upstream_hosts(RET_PTR, RET_LEN);
    info("hosts status=" + st.toString() + " " + pairsToString(load<u32>(RET_PTR), load<u32>(RET_LEN)));
  }
  if (getHeader(0, "x-redis-reinit").status == 0) redisInit();
  const ov = getHeader(0, "x-override");
  if (ov.status == 0) info("override status=" + pinHost(ov.value).toString());
  const cmd = getHeader(0, "x-redis-cmd");
  if (cmd.status != 0) return 0;
  const token = redisCall(getHeader(0, "x-redis-cluster").status == 0 ? getHeader(0, "x-redis-cluster").value : redisCluster, cmd.value, ctx);
  if (token == 0) return 0;
  const after = getHeader(0, "x-after-redis");
  afterRedis.set(ctx, after.status == 0 ? after.value : "continue");
  return 1;
}

/** Sends `cmd` for stream `ctx`; the token, or 0 when the call was refused. */
function redisCall(cluster: string, cmd: string, ctx: u32): u32 {
  const q = respCommand(cmd);
  const c = bytesOf(cluster);
  const st = proxy_redis_call(changetype<usize>(c), c.byteLength, changetype<usize>(q), q.byteLength, RET_PTR);
  const token = load<u32>(RET_PTR);
  info("redis_call status=" + st.toString() + " token=" + token.toString() + " mod4=" + (token % 4).toString());
  if (st != 0) return 0;
  tokenToCtx.set(token, ctx);
  return token;
}

export function proxy_on_redis_call_response(root: u32, token: u32, status: u32, size: u32): void {
  const reply = getBuffer(9, 0, size);
  info("redis_reply root=" + root.toString() + " token=" + token.toString() + " status=" + status.toString() +
    " size=" + size.toString() + " reply=" + reply.value.replaceAll("\r\n", "|"));
  if (!tokenToCtx.has(token)) return;
  const ctx = tokenToCtx.get(token);
  tokenToCtx.delete(token);
  const eff = proxy_set_effective_context(ctx);
  info("effective ctx=" + ctx.toString() + " status=" + eff.toString());
  if (eff != 0) return;
  const action = afterRedis.has(ctx) ? afterRedis.get(ctx) : "continue";
  if (action == "local") {
    const d = bytesOf("rate_limited"); const b = bytesOf("slow down");
    proxy_send_local_response(429, changetype<usize>(d), d.byteLength, changetype<usize>(b), b.byteLength, 0, 0, -1);
    return;
  }
  if (action.startsWith("call:")) {
    afterRedis.set(ctx, "continue");
    if (redisCall(redisCluster, action.substring(5), ctx) != 0) return;
  }
  if (action.startsWith("override:")) info("override status=" + pinHost(action.substring(9)).toString());
  if (action == "none") return;
  info("continue status=" + proxy_continue_stream(0).toString());
}

export function proxy_on_response_headers(ctx: u32, n: u32, eos: u32): u32 {
  if (lateOverride.has(ctx)) info("late override status=" + pinHost(lateOverride.get(ctx)).toString());
  return 0;
}

export function proxy_on_done(ctx: u32): u32 { info("done ctx=" + ctx.toString()); return 1; }
export function proxy_on_log(ctx: u32): void { info("log ctx=" + ctx.toString()); }
export function proxy_on_delete(ctx: u32): void {
  info("delete ctx=" + ctx.toString());
  afterRedis.delete(ctx);
  lateOverride.delete(ctx);
}
