// One accounting pool in Redis: the hosts of one route + cluster (keys namespaced and hash-tagged
// so every key of a pool lives in one Redis Cluster slot; all keys are passed in KEYS).
// Knows the key names and the ARGV layout of lua/acquire.lua, release.lua, renew.lua and
// reconcile.lua (contracts in lua/README.md), and which of this VM's leases are open.
import { LbConfig } from "../../config/lb_config";
import { RedisClient } from "../../redis/client";
import { CandidateSet } from "../candidates/candidates";

export class Pool {
  readonly ns: string;
  readonly keyLoad: string;
  readonly keyLeases: string;
  readonly keyLease: string;
  readonly keySeen: string;
  /** Candidate-set fingerprint last synced to Redis by this VM, and when. */
  syncedFp: string = "";
  syncedAtMs: f64 = -1e18;
  /** Open leases of this VM (renewed on tick). */
  active: Set<string> = new Set();
  lastRenewMs: f64 = 0;
  lastReconcileMs: f64 = 0;

  constructor(public cfg: LbConfig, public redis: RedisClient, route: string, cluster: string) {
    const ns = "{" + cfg.keyPrefix + ":" + (cfg.keyScope == "cluster" ? "" : route) + ":" + cluster + "}";
    this.ns = ns;
    this.keyLoad = ns + ":load";
    this.keyLeases = ns + ":leases";
    this.keyLease = ns + ":lease";
    this.keySeen = ns + ":seen";
  }

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

  releaseArgs(leaseId: string, penalty: i64): string[] {
    return [leaseId, penalty.toString(), this.cfg.failurePenaltyMs.toString(), this.poolTtlMs().toString()];
  }

  poolTtlMs(): i64 {
    let m = this.cfg.leaseTtlMs;
    if (this.cfg.candidateTtlMs > m) m = this.cfg.candidateTtlMs;
    if (this.cfg.hostStaleMs > m) m = this.cfg.hostStaleMs;
    return m * 2;
  }
}
