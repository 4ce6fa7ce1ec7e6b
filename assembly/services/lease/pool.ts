// One accounting pool in Redis: the hosts of one route + cluster (keys namespaced and hash-tagged
// so every key of a pool lives in one Redis Cluster slot; all keys are passed in KEYS).
// Knows the key names and the ARGV layout of lua/acquire.lua, release.lua, renew.lua and
// reconcile.lua (contracts in lua/README.md), and which of this VM's leases are open.
import { LbConfig } from "../../config/lb_config";
import { RedisClient } from "../../redis/client";
import { CandidateSet } from "../candidates/candidates";
import { BoundedFifo } from "../../util/bounded_fifo";

const MAX_GIVEN_UP: i32 = 1024;
/** Hosts one acquire may carry (lua/lib.lua MAX_HOSTS); a longer list is synced in chunks (lua/sync.lua). */
export const SYNC_CHUNK: i32 = 500;

/** A lease id whose acquire got no reply; tombstone: its acquire carried no deadline. */
export class GivenUp {
  constructor(public readonly id: string, public readonly tombstone: bool) {}
}

/** An open lease as a renewal sends it (renew.lua's restore mode: id, host, cost); Lease extends it. */
export class OpenLease {
  constructor(public id: string, public host: string, public cost: i64) {}
}

export class Pool {
  readonly ns: string;
  readonly keyLoad: string;
  readonly keyLeases: string;
  readonly keyLease: string;
  readonly keySeen: string;
  /** Candidate-set fingerprint last synced to Redis by this VM, and when. */
  syncedFp: string = "";
  syncedAtMs: f64 = -1e18;
  /** A chunked candidate sync in flight (lua/sync.lua): its set and how many hosts went out. */
  syncing: CandidateSet | null = null;
  syncSent: i32 = 0;
  /** Open leases of this VM (renewed on tick). */
  active: Map<string, OpenLease> = new Map();
  lastRenewMs: f64 = 0;
  lastReconcileMs: f64 = 0;
  /** How long the healer waits between calls now: 0 (every tick) until calls find nothing. */
  healerEveryMs: f64 = 0;
  /** Lease ids whose acquire got no reply, released with a tombstone once Redis answers again. */
  readonly givenUp: BoundedFifo<GivenUp> = new BoundedFifo<GivenUp>(MAX_GIVEN_UP);
  /** Healer calls sent in the current tick (reconcile.lua answered more = 1). */
  healerRounds: i32 = 0;
  /** Higress's counter hash, kept too with `compat: true` (rolling migration; lua/README.md). */
  readonly higressKey: string;

  constructor(public cfg: LbConfig, public redis: RedisClient, route: string, cluster: string) {
    const ns = "{" + cfg.keyPrefix + ":" + (cfg.keyScope == "cluster" ? "" : route) + ":" + cluster + "}";
    this.ns = ns;
    this.keyLoad = ns + ":load";
    this.keyLeases = ns + ":leases";
    this.keyLease = ns + ":lease";
    this.keySeen = ns + ":seen";
    this.higressKey = cfg.prefix.compat ? "higress:global_least_request_table:" + route + ":" + cluster : "";
  }

  /**
   * Remembers an id to release later (at most MAX_GIVEN_UP; older ones expire by their TTL).
   * tombstone: the acquire carried no deadline, so a run of it queued in Redis must be refused.
   */
  giveUp(id: string, tombstone: bool): void {
    this.givenUp.push(new GivenUp(id, tombstone));
  }

  get compat(): bool { return this.higressKey.length > 0; }

  /** Keys of a lifecycle script: load, leases, lease, then Higress's counter in compat mode. */
  lifecycleKeys(): string[] {
    const keys = this.baseKeys();
    if (this.compat) keys.push(this.higressKey);
    return keys;
  }

  /** Higress's counter as the last key of an acquire-like call, in compat mode. */
  withCompatKey(keys: string[]): string[] {
    if (this.compat) keys.push(this.higressKey);
    return keys;
  }

  /**
   * The optional tail of acquire-like ARGV: the deadline in Redis's clock (0 when the clock offset
   * is not known yet) and the compat flag.
   */
  acquireTail(args: string[], now: f64): string[] {
    const deadline = this.redis.redisDeadline(now, this.pickWaitMs());
    if (deadline > 0 || this.compat) args.push(deadline.toString());
    if (this.compat) args.push("1");
    return args;
  }

  /**
   * How long a pick waits for Redis: pickDeadlineMs, never past the Redis timeout. Always a
   * client-side wait: Envoy's Redis timeout is one timer per connection, restarted by every reply,
   * so under load a call outlives it (host-test/README.md, Redis op timer).
   */
  pickWaitMs(): f64 { return <f64>min(this.cfg.pickDeadlineMs, <i64>this.redis.timeoutMs); }

  keyCandidates(fp: string): string { return this.ns + ":cand:" + fp; }

  /** Should the full candidate list travel with this acquire? (first use, changed set, or aging). */
  mustSendCandidates(c: CandidateSet, now: f64): bool {
    return c.fp != this.syncedFp || now - this.syncedAtMs > <f64>this.cfg.candidateTtlMs / 2;
  }

  markSynced(c: CandidateSet, now: f64): void {
    this.syncedFp = c.fp;
    this.syncedAtMs = now;
  }

  forgetSync(): void { this.syncedFp = ""; }

  baseKeys(): string[] { return [this.keyLoad, this.keyLeases, this.keyLease]; }

  /** KEYS of sync.lua: the acquire layout, then this VM's staging set for the fingerprint. */
  syncKeys(c: CandidateSet, vmTag: string): string[] {
    const keys = this.acquireKeys(c);
    keys.push(this.keyCandidates(c.fp) + ":next:" + vmTag);
    return keys;
  }

  /** ARGV of sync.lua for the next chunk of `c` (from syncSent), which it marks as sent. */
  nextSyncArgs(c: CandidateSet): string[] {
    const start = this.syncSent;
    const end = min(start + SYNC_CHUNK, c.hosts.length);
    const args: string[] = [this.cfg.candidateTtlMs.toString(), this.poolTtlMs().toString(), start.toString(), end == c.hosts.length ? "1" : "0"];
    for (let i = start; i < end; i++) args.push(c.hosts[i]);
    this.syncSent = end;
    return args;
  }

  acquireKeys(c: CandidateSet): string[] {
    return [this.keyLoad, this.keyLeases, this.keyLease, this.keyCandidates(c.fp), this.keySeen];
  }

  /** ARGV of acquire.lua: 7 fixed values, a policy's extra values, then n and the candidate list. */
  acquireArgs(leaseId: string, cost: i64, limit: i64, rnd: u32, c: CandidateSet, withList: bool, extra: string[]): string[] {
    const args: string[] = [leaseId, cost.toString(), this.cfg.leaseTtlMs.toString(), this.cfg.candidateTtlMs.toString(),
      limit.toString(), rnd.toString(), this.cfg.hostStaleMs.toString()];
    for (let i = 0; i < extra.length; i++) args.push(extra[i]);
    if (withList) {
      args.push(c.hosts.length.toString());
      for (let i = 0; i < c.hosts.length; i++) args.push(c.hosts[i]);
    } else {
      args.push("0");
    }
    return args;
  }

  /** tombstone: remember an unknown id for a lease TTL (a release sent for an acquire that failed). */
  releaseArgs(leaseId: string, penalty: i64, tombstone: bool = false): string[] {
    const args = [leaseId, penalty.toString(), this.cfg.failurePenaltyMs.toString(), this.poolTtlMs().toString()];
    if (tombstone || this.compat) args.push(tombstone ? this.cfg.leaseTtlMs.toString() : "0");
    if (this.compat) args.push("1");
    return args;
  }

  reconcileArgs(batch: string): string[] {
    const args = [batch];
    if (this.compat) args.push("1");
    return args;
  }

  poolTtlMs(): i64 {
    let m = this.cfg.leaseTtlMs;
    if (this.cfg.candidateTtlMs > m) m = this.cfg.candidateTtlMs;
    if (this.cfg.hostStaleMs > m) m = this.cfg.hostStaleMs;
    return m * 2;
  }
}
