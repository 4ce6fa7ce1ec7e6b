// Acquire and release of leases, shared by every Redis-backed policy:
// - acquireLeast: lua/acquire.lua through EVALSHA; the reply resumes the stream (or releases at
//   once when the stream ended meanwhile: a client abort must not leak a count);
// - release: fire-and-forget lua/release.lua, counted (failures are metered; the lease then
//   expires by its TTL); a failed request adds a short penalty lease to its host;
// - tick: renew this VM's open leases (so leases stay short while streams may be long) and
//   reconcile expired leases of every pool (crashed gateways heal even without traffic);
// - fallback: while Redis is unavailable, per-VM least request over the same candidates;
// - acquireHost: a lease on a host the policy already chose (lua/charge.lua), falling back to a
//   local lease on that same host; optionally on the condition that the host has room (a limit
//   of its own, and a receiver told of a refusal instead of a shed); an optional observer sees
//   every lease begin and end.
import { RedisReplyHandler, LuaScript } from "../../redis/client";
import { RespKind, RespValue } from "../../redis/resp";
import { CandidateSet } from "../candidates/candidates";
import { LocalLeastRequest } from "../candidates/local_least";
import { Lease } from "./lease";
import { Pool, SYNC_CHUNK } from "./pool";
import { ACQUIRE_SCRIPT, CHARGE_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT, RECONCILE_SCRIPT, SYNC_SCRIPT } from "./scripts";
import { Verdict } from "../request/verdict";
import { LbRequest } from "../request/request";
import { Stats } from "../stats";
import { Xorshift } from "../../util/prng";
import * as host from "../../host/calls";
import { warnThrottled } from "../../host/warn_throttle";

const RENEW_BATCH = 64; // renew.lua's cap (lua/lib.lua MAX_RENEW_IDS)
const LEAST_REQUEST_CALL = new AcquireCall(ACQUIRE_SCRIPT, [], [], "least_request");
// The healer (lua/reconcile.lua) runs every tick, again at once while it answers more = 1, at most
// HEALER_ROUNDS calls per tick per pool: each call is bounded, and every gateway takes its share.
const RECONCILE_EVERY_MS: f64 = 0;
// A healer call that found nothing to do doubles the wait before this VM's next one, up to
// HEALER_IDLE_MAX_MS: an idle pool costs every VM's call each tick otherwise (800 VMs x 10 pools:
// 16,000 calls a second with no traffic). Picks settle what is due themselves.
const HEALER_IDLE_MAX_MS: f64 = 8000;
const RECONCILE_BATCH = "250"; // reconcile.lua's cap (MAX_HEAL_BATCH)
const HEALER_ROUNDS: i32 = 16;
const GIVEN_UP_PER_TICK: i32 = 64;
// An acquire answered SETTLING (more expired buckets due than one call settles) is sent again at
// most this often; then the stream goes on by the fallback and the healer clears the backlog.
const MAX_SETTLE_ROUNDS: i32 = 8;

/** Status string of a script reply array (first element), "" if not an array. */
export function replyStatus(reply: RespValue | null): string {
  if (reply === null || reply.items.length == 0) return "";
  return reply.items[0].str;
}

export function replyItem(reply: RespValue, i: i32): string {
  return i < reply.items.length ? reply.items[i].str : "";
}

/** What a policy adds to an acquire: a script with acquire.lua's KEYS/ARGV head (lua/README.md). */
export class AcquireCall {
  /** fixedHost: the host a charge-type script leases; the fallback then leases it locally too. */
  constructor(public script: LuaScript, public extraKeys: string[], public extraArgs: string[], public defaultReason: string,
    public fixedHost: string = "") {}
  /** The load limit sent instead of the request's (-1: the request's). */
  limit: i64 = -1;
  /** Told instead of shedding when Redis refuses the charge over `limit` (null: shed). */
  full: ChargeRefused | null = null;
}

/** A charge made on the condition that the host has room (a free batch slot) was refused: Redis
 *  counts `load` there. The stream is still paused; the receiver decides what becomes of it. */
export abstract class ChargeRefused {
  abstract onFull(s: LbRequest, load: f64): void;
}

/** Sees each lease start and end (endpoint_metrics measures per-host latency with it); a start
 *  with the request that took it (s.lease is the lease). */
export abstract class LeaseObserver {
  abstract onLeased(lease: Lease, s: LbRequest, now: f64): void;
  abstract onReleased(lease: Lease, now: f64): void;
}

class AcquireReply extends RedisReplyHandler {
  constructor(public acc: Accounting, public s: LbRequest, public pool: Pool, public c: CandidateSet,
    public call: AcquireCall, public withList: bool) { super(); }

  /** The stream went on without this reply (pick deadline): the reply, when it comes, is undone. */
  abandoned: bool = false;
  /** The acquire carried its deadline (Redis's clock known): Redis refuses a late run (LATE). */
  deadline: bool = false;

  onReply(ok: bool, reply: RespValue | null): void {
    this.s.acquiring = false;
    if (this.s.acquireCancelled) this.acc.onCancelledReply(this, ok, reply);
    else if (this.abandoned) this.acc.onAbandonedReply(this, ok, reply);
    else this.acc.onAcquireReply(this, ok, reply);
  }

  onDeadline(): void {
    this.abandoned = true;
    this.acc.onAcquireDeadline(this);
  }
}

/** sync.lua's reply: the next chunk of the list, or the sync is done (or failed: a later pick restarts it). */
class SyncReply extends RedisReplyHandler {
  constructor(public acc: Accounting, public pool: Pool, public c: CandidateSet) { super(); }
  onReply(ok: bool, reply: RespValue | null): void { this.acc.onSyncReply(this, ok, reply); }
}

/** The candidate set's PTTL before a chunked sync (Accounting.syncInChunks). */
class FreshCheck extends RedisReplyHandler {
  constructor(public acc: Accounting, public pool: Pool, public c: CandidateSet) { super(); }
  onReply(ok: bool, reply: RespValue | null): void { this.acc.onFreshCheck(this, ok, reply); }
}

/** reconcile.lua's reply {settled, removed, more}: calls again while more = 1 (bounded per tick). */
class HealerReply extends RedisReplyHandler {
  constructor(public acc: Accounting, public pool: Pool) { super(); }
  onReply(ok: bool, reply: RespValue | null): void {
    if (!ok || reply === null || reply.isError()) {
      this.acc.stats.redisBackgroundFailures();
      return;
    }
    if (reply.items.length != 3) return;
    const idle = reply.items[0].int == 0 && reply.items[1].int == 0 && reply.items[2].int == 0;
    this.pool.healerEveryMs = idle ? Math.min(Math.max(this.pool.healerEveryMs * 2, 1000), HEALER_IDLE_MAX_MS) : 0;
    this.acc.stats.leasesReclaimed(reply.items[1].int);
    if (reply.items[2].int == 1) this.acc.heal(this.pool, host.nowMillis());
  }
}

/** A release's reply: one lost (network, timeout) is sent again from the tick, as a given-up
 *  id (release.lua is idempotent: a release that did run finds no record the second time), with
 *  its tombstone when it carried one (an acquire cancelled by its stream's end). */
class ReleaseReply extends RedisReplyHandler {
  constructor(public acc: Accounting, public pool: Pool, public id: string, public tombstone: bool = false) { super(); }
  onReply(ok: bool, reply: RespValue | null): void {
    if (!ok) { this.acc.stats.redisBackgroundFailures(); this.pool.giveUp(this.id, this.tombstone); return; }
    if (reply !== null && reply.isError()) {
      this.acc.stats.redisBackgroundFailures();
      warnThrottled("release failed", reply.str);
    }
  }
}

/** The charge that moves a request's lease to the host that served it (Accounting.moveLease). */
class MoveReply extends RedisReplyHandler {
  constructor(public acc: Accounting, public s: LbRequest, public pool: Pool, public id: string, public to: string) { super(); }
  onReply(ok: bool, reply: RespValue | null): void { this.acc.onMoved(this, ok, reply); }
}

class CountingHandler extends RedisReplyHandler {
  constructor(public stats: Stats, public what: string) { super(); }
  onReply(ok: bool, reply: RespValue | null): void {
    if (!ok || reply === null || reply.isError()) {
      this.stats.redisBackgroundFailures();
      if (reply !== null && reply.isError()) warnThrottled(this.what + " failed", reply.str);
    }
  }
}

export class Accounting {
  readonly local: LocalLeastRequest = new LocalLeastRequest();
  private readonly background: CountingHandler;
  private leaseSeq: u64 = 0;
  observer: LeaseObserver | null = null;

  constructor(public rng: Xorshift, public stats: Stats, public vmTag: string) {
    this.background = new CountingHandler(stats, "release/renew");
  }

  newLeaseId(): string {
    this.leaseSeq++;
    return this.vmTag + ":" + this.leaseSeq.toString(36);
  }

  /** Pick the least-loaded candidate of the stream's pool and take a lease on it. */
  acquireLeast(s: LbRequest, c: CandidateSet): Verdict {
    return this.acquire(s, c, LEAST_REQUEST_CALL);
  }

  /**
   * A lease on `h`, chosen by the policy (lua/charge.lua: same keys and accounting as acquire.lua,
   * no pick). Without Redis configured the lease is local (this VM's counts), with `reason`.
   */
  acquireHost(s: LbRequest, c: CandidateSet, h: string, reason: string, limit: i64 = -1, full: ChargeRefused | null = null): Verdict {
    if (s.pool === null) {
      this.leaseLocally(s, h);
      s.reason = reason;
      return Verdict.Picked;
    }
    const call = new AcquireCall(CHARGE_SCRIPT, [], [h], reason, h);
    call.limit = limit;
    call.full = full;
    return this.acquire(s, c, call);
  }

  /** Runs `call` (acquire.lua or a script extending it) for the stream; Pending, or the fallback. */
  acquire(s: LbRequest, c: CandidateSet, call: AcquireCall): Verdict {
    const pool = s.pool;
    const now = host.nowMillis();
    // evalScript checks readiness itself (and may let this call through as the breaker's probe).
    if (pool === null) return this.fallback(s, c, call.fixedHost);
    if (!this.sendAcquire(s, pool, c, call, pool.mustSendCandidates(c, now), now)) return this.fallback(s, c, call.fixedHost);
    return Verdict.Pending;
  }

  private leaseLocally(s: LbRequest, h: string): void {
    this.local.acquire(h, s.cost);
    const lease = new Lease("", null, h, s.cost);
    s.lease = lease;
    s.pickedHost = h;
    this.observeLeased(s, lease);
  }

  private observeLeased(s: LbRequest, lease: Lease): void {
    const o = this.observer;
    if (o !== null) o.onLeased(lease, s, host.nowMillis());
  }

  private sendAcquire(s: LbRequest, pool: Pool, c: CandidateSet, call: AcquireCall, withList: bool, now: f64): bool {
    if (s.leaseId.length == 0) s.leaseId = this.newLeaseId();
    if (withList && c.hosts.length > SYNC_CHUNK) {
      // Too long for one call (lua/README.md "Bounds"): synced in chunks beside the picks, which
      // meanwhile use the set Redis holds (or fall back on NEED_CANDIDATES).
      this.syncInChunks(pool, c, now);
      withList = false;
    }
    const args = pool.acquireTail(pool.acquireArgs(s.leaseId, s.cost, call.limit >= 0 ? call.limit : s.limit, <u32>(this.rng.next() >> 33), c, withList, call.extraArgs), now);
    const keys = pool.withCompatKey(pool.acquireKeys(c).concat(call.extraKeys));
    const reply = new AcquireReply(this, s, pool, c, call, withList);
    reply.deadline = pool.redis.clockKnown;
    if (!pool.redis.evalScript(call.script, keys, args, reply, now, pool.pickWaitMs())) return false;
    s.acquiring = true;
    return true;
  }

  /**
   * The stream ended while its acquire was still out (the client left, or the stream went on by
   * the pick deadline): its id is released now, with a tombstone, behind the acquire on the same
   * connection, not when the reply comes. The reply may never reach this plugin: a configuration
   * update deletes the old root context once its last stream ended, and Envoy drops the replies
   * of a deleted root (its lease stayed for the lease TTL). The reply, if it comes, does nothing
   * (onCancelledReply).
   */
  cancelAcquire(s: LbRequest): void {
    const pool = s.pool;
    if (!s.acquiring || s.acquireCancelled || pool === null || s.leaseId.length == 0) return;
    s.acquireCancelled = true;
    if (!pool.redis.evalScript(RELEASE_SCRIPT, pool.lifecycleKeys(), pool.releaseArgs(s.leaseId, 0, true), new ReleaseReply(this, pool, s.leaseId, true), host.nowMillis())) {
      pool.giveUp(s.leaseId, true);
    }
  }

  /** The reply to an acquire whose stream ended and released its id already (cancelAcquire):
   *  nothing to undo or resend; a LATE still teaches Redis's clock. */
  onCancelledReply(r: AcquireReply, ok: bool, reply: RespValue | null): void {
    const status = ok && reply !== null && !reply.isError() ? replyStatus(reply) : "";
    if (status == "LATE") r.pool.redis.learnClock(replyItem(reply!, 1), host.nowMillis());
  }

  /** Per-VM least request (or a local lease on `fixedHost`): Redis is down, or answered something unusable. */
  fallback(s: LbRequest, c: CandidateSet, fixedHost: string = ""): Verdict {
    const h = fixedHost.length > 0 ? fixedHost : this.local.pick(c, this.rng);
    if (h.length == 0) return Verdict.Pass;
    this.leaseLocally(s, h);
    s.reason = "local_fallback";
    return Verdict.Picked;
  }

  onAcquireReply(r: AcquireReply, ok: bool, reply: RespValue | null): void {
    const s = r.s;
    const now = host.nowMillis();
    const status = ok && reply !== null && !reply.isError() ? replyStatus(reply) : "";
    if (status == "SETTLING" && s.port.alive() && s.settleRounds < MAX_SETTLE_ROUNDS) {
      // Each call settles a bounded batch; the pick waits until no expired lease is left to count.
      s.settleRounds++;
      if (this.sendAcquire(s, r.pool, r.c, r.call, r.withList, now)) return;
    }
    if (status == "NEED_CANDIDATES" && !r.withList) {
      // Redis lost (or never had) this candidate set: send it once, same stream; a list too long
      // for one call is synced in chunks while this stream goes on by the fallback.
      r.pool.forgetSync();
      if (r.c.hosts.length > SYNC_CHUNK) this.syncInChunks(r.pool, r.c, now);
      else if (this.sendAcquire(s, r.pool, r.c, r.call, true, now)) return;
    }
    if (status == "LATE") r.pool.redis.learnClock(replyItem(reply!, 1), now);
    if (status == "OK" && s.lease !== null) {
      // The stream moved on already (it has another lease): this reply is unwanted, undo it.
      this.release(new Lease(s.leaseId, r.pool, replyItem(reply!, 1), s.cost), false);
      return;
    }
    if (!ok && s.leaseId.length > 0) {
      // No reply (timeout, network): the acquire may have run, or may still run when Redis comes
      // back. Its id is released once Redis answers again (tick); a late run is refused by its
      // deadline (LATE) or, when it carried none (clock not known yet), by a tombstone.
      r.pool.giveUp(s.leaseId, !r.deadline);
    }
    if (status == "OK") {
      if (r.withList) r.pool.markSynced(r.c, now);
      const lease = new Lease(s.leaseId, r.pool, replyItem(reply!, 1), s.cost);
      r.pool.active.set(lease.id, lease);
      s.lease = lease;
      this.observeLeased(s, lease);
      if (!s.port.alive()) { this.release(lease, false); return; }
      const reason = replyItem(reply!, 3);
      s.port.resumeWith(lease.host, reason.length > 0 ? reason : r.call.defaultReason, replyItem(reply!, 2));
      return;
    }
    if (!s.port.alive()) return;
    if (status == "SHED") {
      const full = r.call.full;
      if (full !== null) { full.onFull(s, F64.parseFloat(replyItem(reply!, 2))); return; }
      s.port.resumeShed(replyItem(reply!, 2));
      return;
    }
    if (reply !== null && reply.isError()) warnThrottled("acquire failed", reply.str);
    // Network error, timeout, NO_CANDIDATE, a script error: never fail the request for it.
    this.resumeByFallback(r);
  }

  private resumeByFallback(r: AcquireReply): void {
    const s = r.s;
    const v = this.fallback(s, r.c, r.call.fixedHost);
    if (v == Verdict.Picked) s.port.resumeWith(s.pickedHost, s.reason, "");
    else s.port.resumePass();
  }

  /** No reply within the pick deadline: the stream goes on by the fallback; the call stays pending. */
  onAcquireDeadline(r: AcquireReply): void {
    if (r.s.port.alive()) this.resumeByFallback(r);
  }

  /**
   * The reply to an acquire the stream stopped waiting for: a lease it took is released at once;
   * no reply at all (timeout, network) gives the id up (released once Redis answers; with a
   * tombstone only when the acquire carried no deadline, so a run still queued writes nothing). LATE (the acquire carried the
   * deadline, Redis refused it) and other answers wrote nothing.
   */
  onAbandonedReply(r: AcquireReply, ok: bool, reply: RespValue | null): void {
    const status = ok && reply !== null && !reply.isError() ? replyStatus(reply) : "";
    if (status == "LATE") r.pool.redis.learnClock(replyItem(reply!, 1), host.nowMillis());
    if (status == "OK") this.release(new Lease(r.s.leaseId, r.pool, replyItem(reply!, 1), r.s.cost), false);
    else if (!ok) r.pool.giveUp(r.s.leaseId, !r.deadline);
  }

  /** Exactly once per lease (Lease.released guards it). */
  release(lease: Lease, failed: bool): void {
    if (lease.released) return;
    lease.released = true;
    const o = this.observer;
    if (o !== null) o.onReleased(lease, host.nowMillis());
    const pool = lease.pool;
    if (pool === null) {
      this.local.release(lease.host, lease.cost);
      return;
    }
    pool.active.delete(lease.id);
    const penalty: i64 = failed ? pool.cfg.failurePenalty : 0;
    const now = host.nowMillis();
    if (!pool.redis.evalScript(RELEASE_SCRIPT, pool.lifecycleKeys(), pool.releaseArgs(lease.id, penalty), new ReleaseReply(this, pool, lease.id), now)) {
      // Not sent (breaker open, Redis away): released from the tick once Redis answers again
      // (or, if it never does before leaseTTL, the lease expires, which removes its count).
      this.stats.redisBackgroundFailures();
      pool.giveUp(lease.id, false);
    }
  }

  /**
   * The stream runs on `to`, not on its lease's host (Envoy retried it elsewhere, or did not honour
   * the override host): the lease moves there (released, then a new one charged on `to`), so for
   * the rest of a stream that may last minutes the count is on the pod that serves it. A charge
   * Redis refuses (`to` no candidate) or does not answer leaves no lease: the stream is then not
   * counted, which the next pick's read of the counts sees.
   */
  moveLease(s: LbRequest, to: string): void {
    const old = s.lease;
    if (old === null || old.released || old.host == to) return;
    this.release(old, false);
    const pool = old.pool;
    if (pool === null) { this.leaseLocally(s, to); s.pickedHost = old.host; return; }
    const c = s.candidates();
    const id = this.newLeaseId();
    const now = host.nowMillis();
    const args = pool.acquireTail(pool.acquireArgs(id, s.cost, 0, <u32>(this.rng.next() >> 33), c, false, [to]), now);
    pool.redis.evalScript(CHARGE_SCRIPT, pool.withCompatKey(pool.acquireKeys(c)), args, new MoveReply(this, s, pool, id, to), now);
  }

  onMoved(m: MoveReply, ok: bool, reply: RespValue | null): void {
    const status = ok && reply !== null && !reply.isError() ? replyStatus(reply) : "";
    if (!ok) { m.pool.giveUp(m.id, false); return; } // it may have run: undone once Redis answers
    if (status != "OK") return; // NO_CANDIDATE, NEED_CANDIDATES, LATE: nothing written
    const lease = new Lease(m.id, m.pool, m.to, m.s.cost);
    m.pool.active.set(lease.id, lease);
    // The stream ended while the charge was in flight (Envoy ends it as soon as the response's
    // last byte is encoded, often in the same read as the headers that revealed the serving host):
    // its failure there is this lease's.
    if (!m.s.port.alive()) { this.release(lease, m.s.failedOnServed); return; }
    m.s.lease = lease;
    this.observeLeased(m.s, lease);
  }

  /** Releases ids whose acquire got no reply, leaving tombstones (lua/release.lua); from the tick. */
  private releaseGivenUp(pool: Pool, now: f64): void {
    let sent = 0;
    while (pool.givenUp.length > 0 && sent < GIVEN_UP_PER_TICK && !pool.redis.breaker.isOpen()) {
      const g = pool.givenUp.shift();
      pool.redis.evalScript(RELEASE_SCRIPT, pool.lifecycleKeys(), pool.releaseArgs(g.id, 0, g.tombstone), this.background, now);
      sent++;
    }
  }

  /**
   * Starts the chunked sync of `c` (lua/sync.lua) unless one is in flight for this pool. First the
   * set's TTL: a set of this fingerprint (this very list) synced less than half its lifetime ago,
   * by any VM, is left as it is, as acquire.lua leaves an inline one (a fleet of VMs each re-sent
   * 1,000 hosts every 15 s: ~2.4 ms of Redis time per VM).
   */
  private syncInChunks(pool: Pool, c: CandidateSet, now: f64): void {
    if (pool.syncing !== null) return;
    pool.syncing = c;
    pool.syncSent = 0;
    if (!pool.redis.command(["PTTL", pool.keyCandidates(c.fp)], new FreshCheck(this, pool, c), now)) pool.syncing = null;
  }

  onFreshCheck(r: FreshCheck, ok: bool, reply: RespValue | null): void {
    const pool = r.pool;
    if (pool.syncing !== r.c) return;
    const now = host.nowMillis();
    if (ok && reply !== null && reply.kind == RespKind.Integer && <f64>reply.int > <f64>pool.cfg.candidateTtlMs / 2) {
      pool.syncing = null;
      pool.markSynced(r.c, now);
      return;
    }
    this.sendSyncChunk(pool, r.c, now);
  }

  /** The next chunk of the pool's sync; a chunk not sent ends the sync (a later pick restarts it). */
  private sendSyncChunk(pool: Pool, c: CandidateSet, now: f64): void {
    if (!pool.redis.evalScript(SYNC_SCRIPT, pool.syncKeys(c, this.vmTag), pool.nextSyncArgs(c), new SyncReply(this, pool, c), now)) pool.syncing = null;
  }

  onSyncReply(r: SyncReply, ok: bool, reply: RespValue | null): void {
    const pool = r.pool;
    if (pool.syncing !== r.c) return;
    const now = host.nowMillis();
    if (!ok || reply === null || reply.isError()) {
      pool.syncing = null;
      this.stats.redisBackgroundFailures();
      if (reply !== null && reply.isError()) warnThrottled("candidate sync failed", reply.str);
      return;
    }
    if (pool.syncSent >= r.c.hosts.length) {
      pool.syncing = null;
      pool.markSynced(r.c, now);
      return;
    }
    this.sendSyncChunk(pool, r.c, now);
  }

  /** One healer call (lua/reconcile.lua); HealerReply sends the next while a backlog remains. */
  heal(pool: Pool, now: f64): void {
    if (pool.healerRounds >= HEALER_ROUNDS) return;
    pool.healerRounds++;
    pool.redis.evalScript(RECONCILE_SCRIPT, pool.lifecycleKeys(), pool.reconcileArgs(RECONCILE_BATCH), new HealerReply(this, pool), now);
  }

  /**
   * Renew open leases at a third of the TTL (renew.lua's restore mode: each lease goes with its
   * host and cost, so one Redis lost or let expire while its stream is open is counted again);
   * run the healer and the Redis probe every tick.
   */
  tick(pool: Pool, now: f64): void {
    pool.redis.probe(now);
    // While the breaker is open only the probe talks to Redis: no background work piles up on it,
    // and the half-open slot stays for a request.
    if (pool.redis.breaker.isOpen()) return;
    if (pool.active.size > 0 && now - pool.lastRenewMs >= <f64>pool.cfg.leaseTtlMs / 3) {
      pool.lastRenewMs = now;
      const open = pool.active.values();
      for (let start = 0; start < open.length; start += RENEW_BATCH) {
        const args: string[] = [pool.cfg.leaseTtlMs.toString(), "+"];
        const end = min(start + RENEW_BATCH, open.length);
        for (let i = start; i < end; i++) { args.push(open[i].id); args.push(open[i].host); args.push(open[i].cost.toString()); }
        pool.redis.evalScript(RENEW_SCRIPT, pool.baseKeys(), args, this.background, now);
      }
    }
    this.releaseGivenUp(pool, now);
    if (now - pool.lastReconcileMs >= Math.max(RECONCILE_EVERY_MS, pool.healerEveryMs)) {
      pool.lastReconcileMs = now;
      pool.healerRounds = 0;
      this.heal(pool, now);
    }
  }
}
