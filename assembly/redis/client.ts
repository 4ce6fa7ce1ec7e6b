// Redis over Higress's proxy_redis_init / proxy_redis_call (higress-abi.md):
// - Envoy keeps ONE Redis client per cluster per worker, shared by every VM, root context and
//   plugin there, and each proxy_redis_init re-initialises it, closing its connections under
//   everybody's calls in flight (host-test/README.md row 3). So a VM initialises a cluster once
//   per settings: a new root context (configuration update) or another rule with the same
//   settings reuses the init; a failed init is retried lazily (at most once per second); a failed
//   call never triggers a re-init.
// - The init asks for each call to be written at once (buffer_flush_timeout=0,
//   max_buffer_size_before_flush=0; honoured from Higress 2.1.9, PR #3126): otherwise Envoy batches writes
//   for up to 3 ms (row 4).
// - calls are raw RESP bytes; replies arrive on the ROOT context with the token, and the reply bytes
//   are readable only inside that callback, so they are parsed there;
// - scripts go as FCALL of the plugin's function library where Redis has functions, else as
//   EVALSHA (functions.ts decides, and loads the library); EVALSHA is transparently re-sent as EVAL
//   on a NOSCRIPT reply;
// - NetworkError (incl. timeouts), refused calls and replies that never come (swept on tick) are
//   failures: the handler is told (ok = false) exactly once, and the circuit breaker counts them.
import * as host from "../host/calls";
import { RespCommand, RespValue, parseResp } from "./resp";
import { CircuitBreaker } from "./breaker";
import * as obs from "./observer";
import * as fns from "./functions";
import { logThrottled, warnThrottled } from "../host/warn_throttle";

export abstract class RedisReplyHandler {
  /** ok = false: not sent, network error, timeout. A Redis error reply comes with ok = true. */
  abstract onReply(ok: bool, reply: RespValue | null): void;
  /**
   * The caller's wait (pick deadline) ended with no reply; the call stays pending and onReply
   * still comes once, with the reply or the failure. Default: treated as a failure now.
   */
  onDeadline(): void { this.onReply(false, null); }
}

export class LuaScript {
  /** The script's function in library (FCALL), null: EVALSHA only. */
  fn: string;
  /** text: the EVAL text, whose SHA-1 is sha (joined only on a NOSCRIPT reply). */
  constructor(public name: string, public text: fns.LuaText, public sha: string, public library: fns.LuaLibrary | null = null) {
    this.fn = library !== null ? library.name + "_" + name : "";
  }
}

class PendingCall {
  /** The wait the call was sent with (waitMs drops to 0 once it has passed). */
  readonly deadlineMs: f64;
  /** counted: a failure feeds the breaker (the tick's probe does not: it only ever closes it). */
  constructor(public handler: RedisReplyHandler, public startedMs: f64, public script: LuaScript | null,
    public keys: string[], public args: string[], public counted: bool = true, public waitMs: f64 = 0, deadlineMs: f64 = -1) {
    this.deadlineMs = deadlineMs >= 0 ? deadlineMs : waitMs;
  }
  /** The one pick let wait while overdue (see mayWait). */
  overdueProbe: bool = false;
  /** Sent as FCALL (an error reply may mean "no function here": see functions.ts). */
  viaFunction: bool = false;
}

function evalCommand(verb: string, body: string, keys: string[], args: string[]): Uint8Array {
  const cmd = new RespCommand().arg(verb).arg(body).argInt(keys.length);
  for (let i = 0; i < keys.length; i++) cmd.arg(keys[i]);
  for (let i = 0; i < args.length; i++) cmd.arg(args[i]);
  return cmd.toBytes();
}

/** The init's cluster name: the caller's, plus the flush parameters. */
const FLUSH_PARAMS = "buffer_flush_timeout=0&max_buffer_size_before_flush=0";

/** What this VM last initialised, per Redis cluster lookup name (the name before `?`). */
const initialisedSettings = new Map<string, string>();

function lookupName(cluster: string): string {
  const q = cluster.indexOf("?");
  return q < 0 ? cluster : cluster.substring(0, q);
}

// The probe (TIME): sent from the tick, past the breaker, while it is open (so routing through
// Redis resumes within a probe period of its return, whatever the outage length) and every
// CLOCK_REFRESH_MS anyway (the reply gives Redis's clock, for the acquire deadline).
const PROBE_EVERY_MS: f64 = 500;
const CLOCK_REFRESH_MS: f64 = 30000;

class LibraryLoadReply extends RedisReplyHandler {
  constructor(public client: RedisClient) { super(); }
  onReply(ok: bool, reply: RespValue | null): void { this.client.onLibraryLoad(ok, reply); }
}

class ProbeReply extends RedisReplyHandler {
  constructor(public client: RedisClient, public sentMs: f64) { super(); }
  onReply(ok: bool, reply: RespValue | null): void { this.client.onProbe(ok, reply, this.sentMs); }
}

export class RedisClient {
  /** Redis's clock minus this VM's (ms), from the last probe or LATE reply; valid when clockKnown. */
  clockOffsetMs: f64 = 0;
  clockKnown: bool = false;
  private clockAtMs: f64 = -1e18;
  private lastProbeMs: f64 = -1e18;
  private probing: bool = false;
  private initialized: bool = false;
  private lastInitMs: f64 = -1e18;
  private pending: Map<u32, PendingCall> = new Map();
  /** Pending calls with a pick deadline. */
  waiting: i32 = 0;
  /** A pick's deadline passed and Redis has answered nothing in time since (see mayWait). */
  private overdue: bool = false;
  /** The longest wait a caller has sent a call with: a reply slower than that would have come
   *  too late for every pick, so it neither closes the breaker nor clears overdue (0: none yet). */
  private timelyMs: f64 = 0;
  /** While overdue, a pick waits for Redis (the one let through). */
  private overdueProbing: bool = false;
  breaker: CircuitBreaker;
  /** Counters for metrics and tests. */
  failures: u64 = 0;
  calls: u64 = 0;
  /** Where latency, failures and breaker changes are reported (services/stats.ts). */
  observer: obs.RedisObserver = new obs.RedisObserver();
  /** Whether script calls go as FCALL (functions.ts). */
  functions: fns.FunctionSupport = new fns.FunctionSupport();
  private functionsOffReported: bool = false;

  constructor(public cluster: string, public username: string, public password: string, public timeoutMs: u32,
    breakerFailures: i64, breakerOpenMs: f64) {
    this.breaker = new CircuitBreaker(breakerFailures, breakerOpenMs);
  }

  /** Called at configure time and lazily before calls while not initialised. */
  init(now: f64): bool {
    this.lastInitMs = now;
    const name = this.cluster + (this.cluster.indexOf("?") < 0 ? "?" : "&") + FLUSH_PARAMS;
    const lookup = lookupName(this.cluster);
    const settings = name + "\n" + this.username + "\n" + this.password + "\n" + this.timeoutMs.toString();
    if (initialisedSettings.has(lookup)) {
      if (initialisedSettings.get(lookup) == settings) { this.initialized = true; return true; }
      host.log(host.LogLevel.Warn, "redis cluster " + lookup + " is configured twice with different credentials, database or timeout;"
        + " Envoy keeps one client per cluster, the last init wins");
    }
    const st = host.redisInit(name, this.username, this.password, this.timeoutMs);
    this.initialized = st == host.Status.Ok;
    if (this.initialized) initialisedSettings.set(lookup, settings);
    else host.log(host.LogLevel.Warn, "redis_init(" + this.cluster + ") failed with status " + st.toString() + "; will retry");
    return this.initialized;
  }

  /** Whether a call may be attempted now (initialised or re-initialised, breaker closed or probing). */
  ready(now: f64): bool {
    if (!this.initialized && now - this.lastInitMs >= 1000) this.init(now);
    return this.initialized && this.breaker.allow(now);
  }

  /**
   * Runs `script` (FCALL or EVALSHA, see functions.ts); returns false when nothing was sent
   * (caller falls back; handler not called).
   * waitMs > 0: the caller waits at most that long (a pick deadline): expireWaits fails the call
   * then (counted by the breaker) and a reply arriving later is dropped.
   */
  evalScript(script: LuaScript, keys: string[], args: string[], handler: RedisReplyHandler, now: f64, waitMs: f64 = 0): bool {
    if (!this.mayCall(now, waitMs)) return false;
    const call = new PendingCall(handler, now, script, keys, args, true, waitMs);
    call.viaFunction = script.library !== null && this.functions.use();
    const query = call.viaFunction ? evalCommand("FCALL", script.fn, keys, args) : evalCommand("EVALSHA", script.sha, keys, args);
    return this.sendWaited(query, call, now);
  }

  /** Whether a call may be sent now (waitMs > 0: a caller that waits, see mayWait). */
  private mayCall(now: f64, waitMs: f64): bool {
    if (waitMs > 0 && !this.mayWait(now)) return false;
    return this.ready(now);
  }

  /** Sends a call that may carry a wait (the overdue probe is marked once it is sent). */
  private sendWaited(query: Uint8Array, call: PendingCall, now: f64): bool {
    if (call.waitMs > this.timelyMs) this.timelyMs = call.waitMs;
    call.overdueProbe = call.waitMs > 0 && this.overdue;
    if (!this.send(query, call, now)) return false;
    if (call.overdueProbe) this.overdueProbing = true;
    return true;
  }

  /**
   * Whether a pick may wait for Redis now. Not while the breaker is open (the tick's TIME probe,
   * not a request, finds out that Redis is back: a half-open pick would wait the whole deadline
   * whenever Redis is still away), nor while an earlier pick's deadline passed with no reply since
   * (Redis stalled: the picks after the first miss fall back at once, each counted toward the
   * breaker, instead of each waiting the deadline until breakerFailures misses open it), except
   * one pick at a time: Redis merely slow (a cold script cache) answers it, which clears overdue.
   */
  private mayWait(now: f64): bool {
    if (this.breaker.isOpen()) return false;
    if (!this.overdue || !this.overdueProbing) return true;
    this.noteFailure(obs.REDIS_FAIL_OVERDUE, now, true);
    return false;
  }

  /** A plain command; returns false when nothing was sent. waitMs > 0: as evalScript's. */
  command(args: string[], handler: RedisReplyHandler, now: f64, waitMs: f64 = 0): bool {
    if (!this.mayCall(now, waitMs)) return false;
    const cmd = new RespCommand();
    for (let i = 0; i < args.length; i++) cmd.arg(args[i]);
    return this.sendWaited(cmd.toBytes(), new PendingCall(handler, now, null, [], [], true, waitMs), now);
  }

  private send(query: Uint8Array, call: PendingCall, now: f64): bool {
    const r = host.redisCall(this.cluster, query);
    if (r.status != host.Status.Ok) {
      // Not re-initialised: an init would close the shared client under every call in flight.
      this.noteFailure(obs.REDIS_FAIL_REFUSED, now, call.counted);
      return false;
    }
    this.calls++;
    this.pending.set(r.token, call);
    if (call.waitMs > 0) this.waiting++;
    return true;
  }

  /** Removes a pending call (every ending of a call goes through here). */
  private take(token: u32): PendingCall {
    const call = this.pending.get(token);
    this.pending.delete(token);
    if (call.waitMs > 0) this.waiting--;
    if (call.overdueProbe) this.overdueProbing = false;
    return call;
  }

  /**
   * From the tick: tells the callers whose wait (pick deadline) passed, counting a failure (the
   * breaker opens after breakerFailures misses in a row); their calls stay pending, so a late
   * reply still reaches the handler. Returns whether calls with a deadline are still waited for.
   */
  expireWaits(now: f64): bool {
    if (this.waiting == 0) return false;
    const tokens = this.pending.keys();
    for (let i = 0; i < tokens.length; i++) {
      const call = this.pending.get(tokens[i]);
      if (call.waitMs > 0 && now - call.startedMs >= call.waitMs) {
        call.waitMs = 0;
        this.waiting--;
        this.overdue = true;
        this.noteFailure(obs.REDIS_FAIL_DEADLINE, now, true);
        if (call.overdueProbe) {
          // Two misses with no reply between them: Redis is stalled, open the breaker now.
          call.overdueProbe = false;
          this.overdueProbing = false;
          if (!this.breaker.isOpen()) { this.breaker.trip(now); this.breakerOpened(obs.REDIS_FAIL_DEADLINE); }
        }
        call.handler.onDeadline();
      }
    }
    return this.waiting > 0;
  }

  /** The root context's proxy_on_redis_call_response. Returns false for an unknown token. */
  onResponse(token: u32, status: u32, size: u32, now: f64): bool {
    if (!this.pending.has(token)) return false;
    const call = this.take(token);
    if (status != 0) {
      this.fail(call, now, now - call.startedMs >= <f64>this.timeoutMs ? obs.REDIS_FAIL_TIMEOUT : obs.REDIS_FAIL_NETWORK);
      return true;
    }
    // Redis answered in time: the next pick may wait for it again. A reply later than any pick
    // could wait (Redis slow, not away) leaves the breaker and overdue as they are: it closing
    // them let every pick wait its whole deadline and fall back anyway.
    const timely = this.timely(call, now);
    if (timely) this.overdue = false;
    const bytes = host.getBufferBytes(host.BufferType.RedisCallResponse, 0, size);
    if (bytes === null) { this.fail(call, now, obs.REDIS_FAIL_BAD_REPLY); return true; }
    const parsed = parseResp(Uint8Array.wrap(bytes));
    const reply = parsed.value;
    if (parsed.status != 0 || reply === null) { this.fail(call, now, obs.REDIS_FAIL_BAD_REPLY); return true; }
    this.observer.replied(now - call.startedMs);
    const script = call.script;
    if (script !== null && call.viaFunction && reply.isError() && this.resendWithoutFunction(call, script, reply.str, now)) return true;
    if (script !== null) { this.functions.onReplied(call.viaFunction); this.reportFunctionsOff(); }
    if (script !== null && reply.isError() && reply.str.startsWith("NOSCRIPT")) {
      // The script cache was flushed or this is a new server: send the text once, same handler.
      const again = new PendingCall(call.handler, call.startedMs, null, [], [], true, call.waitMs, call.deadlineMs);
      if (!this.send(evalCommand("EVAL", script.text.build(), call.keys, call.args), again, now)) call.handler.onReply(false, null);
      return true;
    }
    // (A background call's error reply, e.g. the library's "already exists", is no failure.)
    if (reply.isError() && call.counted) this.observer.failed(obs.REDIS_FAIL_ERROR_REPLY);
    if (timely) this.closeBreaker();
    else if (call.deadlineMs == 0 && call.counted && this.breaker.isOpen()) this.noteFailure(obs.REDIS_FAIL_DEADLINE, now, true);
    call.handler.onReply(true, reply);
    return true;
  }

  /**
   * An FCALL's error reply: when it says the function cannot run here, the call goes again as
   * EVALSHA (same handler, same deadline) and, on a missing library, the library is loaded.
   * Returns false when the error is the script's own (given to the handler as usual).
   */
  private resendWithoutFunction(call: PendingCall, script: LuaScript, err: string, now: f64): bool {
    const action = this.functions.onCallError(err, call.startedMs, now);
    this.reportFunctionsOff();
    if (action == fns.FN_ERROR_IS_THE_SCRIPTS) return false;
    const again = new PendingCall(call.handler, call.startedMs, script, call.keys, call.args, true, call.waitMs, call.deadlineMs);
    if (!this.send(evalCommand("EVALSHA", script.sha, call.keys, call.args), again, now)) call.handler.onReply(false, null);
    // After the re-sent call: Redis compiles the library (~2 ms) without delaying it.
    if (action == fns.FN_RESEND_AND_LOAD) this.loadLibrary(script.library!, now);
    return true;
  }


  /** FUNCTION LOAD of the library, in the background (a failure does not feed the breaker). */
  private loadLibrary(library: fns.LuaLibrary, now: f64): void {
    const cmd = new RespCommand().arg("FUNCTION").arg("LOAD").arg(library.text.build());
    if (!this.send(cmd.toBytes(), new PendingCall(new LibraryLoadReply(this), now, null, [], [], false), now)) this.functions.loadNotSent();
  }

  onLibraryLoad(ok: bool, reply: RespValue | null): void {
    const isError = reply !== null && reply.isError();
    this.functions.onLoadReply(ok && reply !== null, isError, isError ? reply!.str : "", host.nowMillis());
    this.reportFunctionsOff();
  }

  /** Logs once, when functions were just given up (after any FunctionSupport event). */
  private reportFunctionsOff(): void {
    if (!this.functions.isOff() || this.functionsOffReported) return;
    this.functionsOffReported = true;
    host.log(host.LogLevel.Warn, "redis " + lookupName(this.cluster) + ": scripts go as EVALSHA, not FCALL (Redis functions unavailable: "
      + this.functions.offReason + ")");
  }

  /**
   * The absolute deadline, in Redis's clock (ms), of a call sent now that the plugin waits for at
   * most waitMs; 0 (no deadline) while the clock offset is unknown.
   */
  redisDeadline(now: f64, waitMs: f64): i64 {
    if (!this.clockKnown) return 0;
    return <i64>Math.floor(now + this.clockOffsetMs + waitMs);
  }

  /** Redis's time (ms, decimal text) observed at local time now (a LATE reply carries it). */
  learnClock(redisMs: string, now: f64): void {
    const t = parseFloat(redisMs);
    if (isNaN(t) || t <= 0) return;
    this.clockOffsetMs = t - now;
    this.clockKnown = true;
    this.clockAtMs = now;
  }

  /** From the tick: a TIME probe while the breaker is open, or when the clock offset is stale. */
  probe(now: f64): void {
    if (this.probing || now - this.lastProbeMs < PROBE_EVERY_MS) return;
    if (!this.breaker.isOpen() && now - this.clockAtMs < CLOCK_REFRESH_MS) return;
    if (!this.initialized && now - this.lastInitMs >= 1000) this.init(now);
    if (!this.initialized) return;
    this.lastProbeMs = now;
    const cmd = new RespCommand().arg("TIME");
    const r = host.redisCall(this.cluster, cmd.toBytes());
    if (r.status != host.Status.Ok) { this.initialized = false; return; }
    this.probing = true;
    this.calls++;
    this.pending.set(r.token, new PendingCall(new ProbeReply(this, now), now, null, [], [], false));
  }

  onProbe(ok: bool, reply: RespValue | null, sentMs: f64): void {
    this.probing = false;
    if (!ok || reply === null || reply.isError() || reply.items.length != 2) return;
    const sec = parseFloat(reply.items[0].str);
    const usec = parseFloat(reply.items[1].str);
    if (isNaN(sec) || isNaN(usec)) return;
    const now = host.nowMillis();
    // Redis read its clock about half-way through the round trip.
    this.clockOffsetMs = sec * 1000 + Math.floor(usec / 1000) - (sentMs + now) / 2;
    this.clockKnown = true;
    this.clockAtMs = now;
    // Redis answers again in time for a pick: close the breaker at once.
    if (this.timelyMs <= 0 || now - sentMs <= this.timelyMs) this.closeBreaker();
  }

  /** Replies that never came (host bug or lost callback) are failed after timeout + 1 s. */
  sweep(now: f64): void {
    if (this.pending.size == 0) return;
    const limit = <f64>this.timeoutMs + 1000;
    const tokens = this.pending.keys();
    for (let i = 0; i < tokens.length; i++) {
      const call = this.pending.get(tokens[i]);
      if (now - call.startedMs > limit) {
        this.take(tokens[i]);
        this.fail(call, now, obs.REDIS_FAIL_TIMEOUT);
      }
    }
  }

  private fail(call: PendingCall, now: f64, kind: i32): void {
    if (call.script !== null) this.functions.onLost(call.viaFunction);
    this.noteFailure(kind, now, call.counted);
    call.handler.onReply(false, null);
  }

  /** Whether a reply came soon enough for a pick: a waited call within its wait, any other
   *  within the longest wait callers use (every reply while no caller waits). */
  private timely(call: PendingCall, now: f64): bool {
    if (call.deadlineMs > 0) return call.waitMs > 0;
    return this.timelyMs <= 0 || now - call.startedMs <= this.timelyMs;
  }

  private closeBreaker(): void {
    this.overdue = false;
    this.overdueProbing = false;
    const wasOpen = this.breaker.isOpen();
    this.breaker.onSuccess();
    if (wasOpen) {
      this.observer.breakerChanged(false);
      logThrottled(host.LogLevel.Info, "redis circuit breaker closed", lookupName(this.cluster) + " answers in time again; picks go through Redis");
    }
  }

  /** The breaker just opened: the gauge, and one log line (an outage is otherwise silent). */
  private breakerOpened(kind: i32): void {
    this.observer.breakerChanged(true);
    const why = kind >= 0 && kind < obs.REDIS_FAIL_KINDS.length ? obs.REDIS_FAIL_KINDS[kind] : "failure";
    // Throttled: a flapping Redis opens and closes it every probe period.
    warnThrottled("redis circuit breaker open", lookupName(this.cluster) + " (last failure: " + why
      + "); picks use the local fallback until Redis answers in time");
  }

  /** counted: the failure feeds the breaker (the tick's probe does not: it only ever closes it). */
  private noteFailure(kind: i32, now: f64, counted: bool): void {
    this.failures++;
    this.observer.failed(kind);
    if (!counted) return;
    const wasOpen = this.breaker.isOpen();
    this.breaker.onFailure(now);
    if (!wasOpen && this.breaker.isOpen()) this.breakerOpened(kind);
  }

  /** Before the client is dropped (new configuration): an open breaker no longer counts. */
  retire(): void {
    if (this.breaker.isOpen()) this.observer.breakerChanged(false);
  }
}
