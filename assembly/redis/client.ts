// Redis over Higress's proxy_redis_init / proxy_redis_call (higress-abi.md):
// - init once per VM and cluster; a failed init is retried lazily (at most once per second);
// - calls are raw RESP bytes; replies arrive on the ROOT context with the token, and the reply bytes
//   are readable only inside that callback, so they are parsed there;
// - scripts go as EVALSHA and are transparently re-sent as EVAL on a NOSCRIPT reply;
// - NetworkError (incl. timeouts), refused calls and replies that never come (swept on tick) are
//   failures: the handler is told (ok = false) exactly once, and the circuit breaker counts them.
import * as host from "../host/calls";
import { RespCommand, RespValue, parseResp } from "./resp";
import { CircuitBreaker } from "./breaker";
import * as obs from "./observer";

export abstract class RedisReplyHandler {
  /** ok = false: not sent, network error, timeout. A Redis error reply comes with ok = true. */
  abstract onReply(ok: bool, reply: RespValue | null): void;
}

export class LuaScript {
  constructor(public name: string, public source: string, public sha: string) {}
}

class PendingCall {
  constructor(public handler: RedisReplyHandler, public startedMs: f64, public script: LuaScript | null,
    public keys: string[], public args: string[]) {}
}

function evalCommand(verb: string, body: string, keys: string[], args: string[]): Uint8Array {
  const cmd = new RespCommand().arg(verb).arg(body).argInt(keys.length);
  for (let i = 0; i < keys.length; i++) cmd.arg(keys[i]);
  for (let i = 0; i < args.length; i++) cmd.arg(args[i]);
  return cmd.toBytes();
}

export class RedisClient {
  private initialized: bool = false;
  private lastInitMs: f64 = -1e18;
  private pending: Map<u32, PendingCall> = new Map();
  breaker: CircuitBreaker;
  /** Counters for metrics and tests. */
  failures: u64 = 0;
  calls: u64 = 0;
  /** Where latency, failures and breaker changes are reported (services/stats.ts). */
  observer: obs.RedisObserver = new obs.RedisObserver();

  constructor(public cluster: string, public username: string, public password: string, public timeoutMs: u32,
    breakerFailures: i64, breakerOpenMs: f64) {
    this.breaker = new CircuitBreaker(breakerFailures, breakerOpenMs);
  }

  /** Called at configure time and lazily before calls while not initialised. */
  init(now: f64): bool {
    this.lastInitMs = now;
    const st = host.redisInit(this.cluster, this.username, this.password, this.timeoutMs);
    this.initialized = st == host.Status.Ok;
    if (!this.initialized) host.log(host.LogLevel.Warn, "redis_init(" + this.cluster + ") failed with status " + st.toString() + "; will retry");
    return this.initialized;
  }

  /** Whether a call may be attempted now (initialised or re-initialised, breaker closed or probing). */
  ready(now: f64): bool {
    if (!this.initialized && now - this.lastInitMs >= 1000) this.init(now);
    return this.initialized && this.breaker.allow(now);
  }

  /** EVALSHA `script`; returns false when nothing was sent (caller falls back; handler not called). */
  evalScript(script: LuaScript, keys: string[], args: string[], handler: RedisReplyHandler, now: f64): bool {
    if (!this.ready(now)) return false;
    return this.send(evalCommand("EVALSHA", script.sha, keys, args), new PendingCall(handler, now, script, keys, args), now);
  }

  command(args: string[], handler: RedisReplyHandler, now: f64): bool {
    if (!this.ready(now)) return false;
    const cmd = new RespCommand();
    for (let i = 0; i < args.length; i++) cmd.arg(args[i]);
    return this.send(cmd.toBytes(), new PendingCall(handler, now, null, [], []), now);
  }

  private send(query: Uint8Array, call: PendingCall, now: f64): bool {
    const r = host.redisCall(this.cluster, query);
    if (r.status != host.Status.Ok) {
      this.noteFailure(obs.REDIS_FAIL_REFUSED, now);
      // A cluster the host does not know (or a lost client) needs a new init.
      this.initialized = false;
      return false;
    }
    this.calls++;
    this.pending.set(r.token, call);
    return true;
  }

  /** The root context's proxy_on_redis_call_response. Returns false for an unknown token. */
  onResponse(token: u32, status: u32, size: u32, now: f64): bool {
    if (!this.pending.has(token)) return false;
    const call = this.pending.get(token);
    this.pending.delete(token);
    if (status != 0) {
      this.fail(call, now, now - call.startedMs >= <f64>this.timeoutMs ? obs.REDIS_FAIL_TIMEOUT : obs.REDIS_FAIL_NETWORK);
      return true;
    }
    const bytes = host.getBufferBytes(host.BufferType.RedisCallResponse, 0, size);
    if (bytes === null) { this.fail(call, now, obs.REDIS_FAIL_BAD_REPLY); return true; }
    const parsed = parseResp(Uint8Array.wrap(bytes));
    const reply = parsed.value;
    if (parsed.status != 0 || reply === null) { this.fail(call, now, obs.REDIS_FAIL_BAD_REPLY); return true; }
    this.observer.replied(now - call.startedMs);
    const script = call.script;
    if (script !== null && reply.isError() && reply.str.startsWith("NOSCRIPT")) {
      // The script cache was flushed or this is a new server: send the text once, same handler.
      const again = new PendingCall(call.handler, now, null, [], []);
      if (!this.send(evalCommand("EVAL", script.source, call.keys, call.args), again, now)) call.handler.onReply(false, null);
      return true;
    }
    if (reply.isError()) this.observer.failed(obs.REDIS_FAIL_ERROR_REPLY);
    const wasOpen = this.breaker.isOpen();
    this.breaker.onSuccess();
    if (wasOpen) this.observer.breakerChanged(false);
    call.handler.onReply(true, reply);
    return true;
  }

  /** Replies that never came (host bug or lost callback) are failed after timeout + 1 s. */
  sweep(now: f64): void {
    if (this.pending.size == 0) return;
    const limit = <f64>this.timeoutMs + 1000;
    const tokens = this.pending.keys();
    for (let i = 0; i < tokens.length; i++) {
      const call = this.pending.get(tokens[i]);
      if (now - call.startedMs > limit) {
        this.pending.delete(tokens[i]);
        this.fail(call, now, obs.REDIS_FAIL_TIMEOUT);
      }
    }
  }

  private fail(call: PendingCall, now: f64, kind: i32): void {
    this.noteFailure(kind, now);
    call.handler.onReply(false, null);
  }

  private noteFailure(kind: i32, now: f64): void {
    this.failures++;
    this.observer.failed(kind);
    const wasOpen = this.breaker.isOpen();
    this.breaker.onFailure(now);
    if (!wasOpen && this.breaker.isOpen()) this.observer.breakerChanged(true);
  }

  /** Before the client is dropped (new configuration): an open breaker no longer counts. */
  retire(): void {
    if (this.breaker.isOpen()) this.observer.breakerChanged(false);
  }
}
