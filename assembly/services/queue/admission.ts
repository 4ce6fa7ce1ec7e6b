// Gateway-side queueing (lua/queue.lua): with queueCapacity > 0, a request of a Redis-backed pool
// takes one of the pool's capacity slots before its policy decides; when none is free it waits,
// its stream held (StopIteration in request headers/body), in the pool's queue in Redis (priority
// band, tenant fairness, FIFO). A stream ending frees its slot and, in the same script, hands
// the free slots to the head of the queue; this VM's own entries among them go on when that
// reply arrives, other gateways' at their next poll (this VM polls its waiting entries every
// queuePollMs on the tick). The reply that admits one runs the policy (StreamPort.admitted);
// after queueMaxWaitMs the request is answered 429/503 (shedStatus) with Retry-After. The slot is freed when the stream
// ends, however it ends; admitted slots are renewed like leases, so a crashed gateway's slots
// expire after the lease TTL and its waiting entries after queueEntryTtlMs.
// Failure behaviour: Redis unavailable or an error reply -> the request is admitted (fail open, as
// the accounting does); never throws.
import { RedisReplyHandler, LuaScript } from "../../redis/client";
import { RespValue } from "../../redis/resp";
import { Pool } from "../lease/pool";
import { LbRequest, PRIORITY_HIGH, PRIORITY_LOW } from "../request/request";
import { Verdict } from "../request/verdict";
import { Stats } from "../stats";
import * as gen from "../../generated/lua";
import { ScriptText } from "../lease/lua_text";
import { LUA_LIBRARY } from "../lease/scripts";
import * as host from "../../host/calls";
import { tenantKey } from "./tenant";
import { warnThrottled } from "../../host/warn_throttle";
import { BoundedFifo } from "../../util/bounded_fifo";

export const QUEUE_SCRIPT = new LuaScript("queue", new ScriptText("queue", gen.QUEUE_DEFS), gen.QUEUE_SHA, LUA_LIBRARY);

const POLLS_PER_TICK = 256;

/**
 * How often a waiting entry is polled: every queuePollMs near the head; further back, about once
 * per `capacity` requests ahead of it (slots free about that fast), but at least three times per
 * queueEntryTtlMs so the entry stays alive. Bounds the Redis calls to O(capacity) per tick
 * instead of O(waiting).
 */
export function pollInterval(ahead: i64, capacity: i64, pollMs: i64, entryTtlMs: i64): f64 {
  const rounds = capacity > 0 ? ahead / capacity : 0;
  return <f64>min(pollMs * max<i64>(1, rounds), entryTtlMs / 3);
}

export function queueKeys(pool: Pool): string[] {
  return [pool.ns + ":q", pool.ns + ":qhb", pool.ns + ":qt", pool.ns + ":adm"];
}

function bandOf(priority: i32): i32 {
  return priority == PRIORITY_HIGH ? 2 : priority == PRIORITY_LOW ? 0 : 1;
}

class Entry {
  polling: bool = false;
  /** Not admitted yet. */
  waiting: bool = true;
  /** Counted as queued (Redis answered QUEUED at least once). */
  queued: bool = false;
  lastRenewMs: f64 = 0;
  lastPollMs: f64 = 0;
  /** Requests ahead of this one at the last answer. */
  ahead: i64 = 0;
  constructor(public r: LbRequest, public pool: Pool, public id: string, public enqueuedMs: f64) {}
}

class QueueReply extends RedisReplyHandler {
  constructor(public q: AdmissionQueue, public e: Entry) { super(); }
  onReply(ok: bool, reply: RespValue | null): void { this.q.onReply(this.e, ok, reply); }
  /** An enter not answered within the pick deadline: Redis is slow or away, the request goes on. */
  onDeadline(): void { this.q.onEnterLate(this.e); }
}

/** The reply of an exit: the ids handed a slot; this VM's own go on at once. An exit that
 *  failed (network, timeout) is sent again from the tick: exits are idempotent. */
class HandOffReply extends RedisReplyHandler {
  constructor(public q: AdmissionQueue, public pool: Pool, public args: string[]) { super(); }
  onReply(ok: bool, reply: RespValue | null): void {
    if (ok && reply !== null) this.q.onHandOff(reply);
    else if (!ok) this.q.exitLater(this.pool, this.args);
  }
}

/** Exits kept for a later tick at most (older ones lapse: slots by the lease TTL, entries by
 *  queueEntryTtlMs). */
const UNSENT_EXITS_MAX = 1024;

/** An exit Redis did not take: its pool and the queue.lua arguments, sent again from the tick. */
class UnsentExit {
  constructor(public readonly pool: Pool, public readonly args: string[]) {}
}

class Background extends RedisReplyHandler {
  onReply(_ok: bool, _reply: RespValue | null): void {}
}

export class AdmissionQueue {
  /** Streams holding an entry or a slot, by queue id. */
  private entries: Map<string, Entry> = new Map();
  private byRequest: Map<usize, string> = new Map();
  private readonly background: Background = new Background();
  /** Exits Redis did not take (breaker open, a failed call), sent again from the tick. */
  private readonly unsent: BoundedFifo<UnsentExit> = new BoundedFifo<UnsentExit>(UNSENT_EXITS_MAX);

  /** Metrics (stats.ts): llmlb_queue_depth, llmlb_queue_wait_ms, llmlb_queue_*_total. */
  constructor(private stats: Stats) {}

  /** A new configuration: waiting requests go on with the route's own load balancing (their
   *  Redis client is being replaced, a poll reply might never come). */
  reset(): void {
    const all = this.entries.values();
    const now = host.nowMillis();
    for (let i = 0; i < all.length; i++) {
      const e = all[i];
      if (e.waiting && e.queued) this.stats.queueLeft(now - e.enqueuedMs);
      if (e.waiting && e.r.port.alive()) { e.waiting = false; e.r.port.resumePass(); }
    }
    this.entries.clear();
    this.byRequest.clear();
    this.unsent.clear();
  }

  /** Takes a slot for `r` (Pending: the reply or a later poll calls r.port.admitted()); Pass when not queueing. */
  enter(r: LbRequest, id: string): Verdict {
    const pool = r.pool;
    const s = r.cfg.queue;
    if (pool === null || s.capacity <= 0) return Verdict.Pass;
    const now = host.nowMillis();
    let tenant = "";
    if (s.tenantHeader.length > 0) {
      const t = host.getHeader(host.MapType.RequestHeaders, s.tenantHeader);
      if (t !== null) tenant = tenantKey(t);
    }
    const e = new Entry(r, pool, id, now);
    const args: string[] = ["enter", id, bandOf(r.priority).toString(), tenant, s.capacity.toString(),
      s.entryTtlMs.toString(), r.cfg.leaseTtlMs.toString()];
    e.polling = true;
    if (!pool.redis.evalScript(QUEUE_SCRIPT, queueKeys(pool), args, new QueueReply(this, e), now, pool.pickWaitMs())) return Verdict.Pass;
    this.entries.set(id, e);
    this.byRequest.set(changetype<usize>(r), id);
    return Verdict.Pending;
  }

  onReply(e: Entry, ok: bool, reply: RespValue | null): void {
    e.polling = false;
    if (!this.entries.has(e.id)) return; // the stream ended meanwhile (leave() sent the exit)
    const status = ok && reply !== null && !reply.isError() && reply.items.length > 0 ? reply.items[0].str : "";
    if (!e.waiting) {
      // Gone on by the fail open (onEnterLate) before this answer: the request runs, so its id
      // holds a slot now, not a place at the head of the queue (whose hand-off it would never
      // claim, letting a newcomer in past capacity once the grant lapsed).
      if (status == "QUEUED") this.renew(e, host.nowMillis());
      return;
    }
    if (status == "QUEUED") {
      e.ahead = reply!.items.length > 1 ? I64.parseInt(reply!.items[1].str) : 0;
      if (!e.queued) {
        e.queued = true;
        this.stats.queueEntered();
      }
      return;
    }
    // ADMITTED, or fail open (GONE after an expiry, an error, Redis down): the request goes on.
    if (status != "ADMITTED" && reply !== null && reply.isError()) warnThrottled("queue failed", reply.str);
    // Gone on without Redis's admission, it runs all the same: its id holds a slot from now (not
    // from the tick's first renew, a third of the lease TTL later, newcomers admitted past capacity
    // meanwhile). A renew Redis does not take is the tick's to send.
    if (status != "ADMITTED") this.renew(e, host.nowMillis());
    this.admit(e);
  }

  /** The enter got no answer within the pick deadline: admitted (fail open, as when Redis is
   *  down). If the enter still runs, the slot it may take is renewed and freed with the stream. */
  onEnterLate(e: Entry): void {
    if (!this.entries.has(e.id) || !e.waiting || e.queued) return;
    this.admit(e);
  }

  /** Keeps an exit Redis did not take for the tick. */
  exitLater(pool: Pool, args: string[]): void {
    this.unsent.push(new UnsentExit(pool, args));
  }

  private sendExit(pool: Pool, args: string[], now: f64): bool {
    return pool.redis.evalScript(QUEUE_SCRIPT, queueKeys(pool), args, new HandOffReply(this, pool, args), now);
  }

  /** Sends the exits kept while Redis did not take them (from the tick; stops at the first refusal). */
  private resendExits(now: f64): void {
    while (this.unsent.length > 0) {
      const x = this.unsent.front();
      if (x.pool.redis.breaker.isOpen() || !this.sendExit(x.pool, x.args, now)) return;
      this.unsent.shift();
    }
  }

  private admit(e: Entry): void {
    e.waiting = false;
    e.lastRenewMs = host.nowMillis();
    if (e.queued) {
      this.stats.queueLeft(e.lastRenewMs - e.enqueuedMs);
      this.stats.queueAdmitted();
      e.r.queuedAtMs = e.enqueuedMs;
    }
    e.r.port.admitted();
  }

  /** The id of `e` (a running stream) holds a slot for the lease TTL (queue.lua renew: taken from
   *  the queue if it waits there). */
  private renew(e: Entry, now: f64): void {
    e.pool.redis.evalScript(QUEUE_SCRIPT, queueKeys(e.pool), ["renew", e.r.cfg.leaseTtlMs.toString(), e.id], this.background, now);
  }

  /** An exit handed free slots to the head of the queue: entries of this VM claim theirs (a
   *  renew, which turns the short grant into a slot) and go on now, without waiting for a poll.
   *  Other gateways' entries find theirs at their next poll. */
  onHandOff(reply: RespValue): void {
    if (reply.isError()) return;
    for (let i = 1; i < reply.items.length; i++) {
      const id = reply.items[i].str;
      if (!this.entries.has(id)) continue;
      const e = this.entries.get(id);
      if (!e.waiting) continue;
      this.renew(e, host.nowMillis());
      this.admit(e);
    }
  }

  /** The stream ended: frees its slot or drops its entry (exactly once). */
  leave(r: LbRequest): void {
    const k = changetype<usize>(r);
    if (!this.byRequest.has(k)) return;
    const id = this.byRequest.get(k);
    this.byRequest.delete(k);
    if (!this.entries.has(id)) return;
    const e = this.entries.get(id);
    this.entries.delete(id);
    if (e.waiting && e.queued) this.stats.queueLeft(host.nowMillis() - e.enqueuedMs);
    const s = e.r.cfg.queue;
    const args: string[] = ["exit", id, s.capacity.toString(), s.entryTtlMs.toString()];
    if (!this.sendExit(e.pool, args, host.nowMillis())) this.exitLater(e.pool, args);
  }

  /** Polls waiting entries, times out those past queueMaxWaitMs, renews admitted slots. */
  tick(now: f64): void {
    this.resendExits(now);
    if (this.entries.size == 0) return;
    const all = this.entries.values();
    let polls = 0;
    for (let i = 0; i < all.length; i++) {
      const e = all[i];
      const s = e.r.cfg.queue;
      if (!e.waiting) {
        if (now - e.lastRenewMs < <f64>e.r.cfg.leaseTtlMs / 3) continue;
        e.lastRenewMs = now;
        this.renew(e, now);
        continue;
      }
      if (now - e.enqueuedMs >= <f64>s.maxWaitMs) {
        this.stats.queueTimedOut();
        const r = e.r;
        this.leave(r);
        r.port.resumeShed("queue_timeout");
        continue;
      }
      if (e.polling || polls >= POLLS_PER_TICK || now - e.lastPollMs < pollInterval(e.ahead, s.capacity, s.pollMs, s.entryTtlMs)) continue;
      polls++;
      e.lastPollMs = now;
      e.polling = true;
      const args: string[] = ["poll", e.id, s.capacity.toString(), s.entryTtlMs.toString(), e.r.cfg.leaseTtlMs.toString()];
      if (!e.pool.redis.evalScript(QUEUE_SCRIPT, queueKeys(e.pool), args, new QueueReply(this, e), now)) {
        // Redis away (breaker open): the request goes on, as a new arrival would (fail open).
        e.polling = false;
        this.admit(e);
      }
    }
  }
}
