// Fleet in-flight counts per host, for the stale-metric correction (HostView.effectiveWaiting):
// - with Redis: the pool's load (lua/inspect.lua) read on tick every inflightRefreshMs, plus the
//   picks this VM made since that read was sent (they may not be in it), minus the requests this
//   VM finished since (they may still be in it), plus local leases taken while Redis was unavailable;
// - without Redis: this VM's own leases (Accounting's local counts).
// Each request counts once, from its pick until it ends, whatever lease it got (a CountedPick on
// the request, taken back once): a local lease moves its pick to the local counts; a pick with no
// lease in Redis never reaches a read, so it comes off where it is still counted. A Redis outage
// (every read failing) thus leaves no count behind.
// A read of more than INSPECT_CHUNK hosts goes out as several inspect calls (each bounded, lua/
// README.md "Bounds"), sent together; it completes when the last one answers.
// Failure behaviour: a failed read keeps the previous counts and folds the picks it covered back
// into "since", so nothing is forgotten; never throws.
import { RedisReplyHandler } from "../../redis/client";
import { RespValue } from "../../redis/resp";
import { Pool } from "../lease/pool";
import { INSPECT_SCRIPT } from "../lease/scripts";
import { LocalLeastRequest } from "../candidates/local_least";
import { CandidateSet } from "../candidates/candidates";
import { CountedPick } from "./counted_pick";

/** Hosts per inspect call: inspect.lua's cap (MAX_HOSTS). */
const INSPECT_CHUNK: i32 = 500;

function addTo(m: Map<string, f64>, k: string, v: f64): void {
  m.set(k, (m.has(k) ? m.get(k) : 0) + v);
}

function valueOf(m: Map<string, f64>, k: string): f64 {
  return m.has(k) ? m.get(k) : 0;
}

/** A count Redis sent (a load's score): a number that is not finite or is negative (corrupt data)
 *  counts 0, alike in the periodic read and in a pick's own read (pick_reads.ts). */
export function countOf(text: string): f64 {
  const v = F64.parseFloat(text);
  return isFinite(v) && v >= 0 ? v : 0.0;
}

export class PoolInflight {
  hosts: string[] = [];
  fleet: Map<string, f64> = new Map();
  /** Picks of this VM covered by the read in flight, and those made after it was sent. */
  batch: Map<string, f64> = new Map();
  since: Map<string, f64> = new Map();
  /** This VM's picks minus its ends per host, never reset: the difference of two readings is
   *  what this VM changed in between (a read's own count plus that is the host's count now). */
  net: Map<string, f64> = new Map();
  reading: bool = false;
  /** Reads sent so far (the one in flight included), and how many had been sent when the last
   *  read that answered was sent: a pick made before that read is in its counts or in no count. */
  readsSent: i64 = 0;
  readsAnswered: i64 = 0;
  lastReadMs: f64 = -1e18;
  /** When the last read that answered was sent (its counts are as of then). */
  answeredReadMs: f64 = -1e18;
  /** Chunks of the read in flight not answered yet; the counts they brought; whether one failed. */
  private chunksLeft: i32 = 0;
  private fresh: Map<string, f64> = new Map();
  private failed: bool = false;

  constructor(public pool: Pool) {}

  count(address: string): f64 {
    // `since` goes negative for releases of requests the last read already counted.
    return max(0.0, valueOf(this.fleet, address) + valueOf(this.batch, address) + valueOf(this.since, address));
  }

  /** This VM picked `address`: counted until unpicked (the reads may not have it yet). */
  picked(address: string, cost: f64): void {
    addTo(this.since, address, cost);
    addTo(this.net, address, cost);
  }

  /**
   * A pick made when `readsSentAtPick` reads had been sent is no longer counted here. `inRedis`:
   * its request held a lease in Redis, which the reads sent after the pick counted: it comes off
   * `since`, as any end of what a read counted. Otherwise no read counted it: it comes off where
   * the pick is still counted: `since`, the read in flight's `batch`, or nowhere once a read sent
   * after the pick answered (that read's counts replaced it).
   */
  unpicked(address: string, cost: f64, readsSentAtPick: i64, inRedis: bool): void {
    addTo(this.net, address, -cost);
    if (inRedis || this.readsSent == readsSentAtPick) addTo(this.since, address, -cost);
    else if (this.readsAnswered > readsSentAtPick) return;
    else if (this.reading) addTo(this.batch, address, -cost);
    else addTo(this.since, address, -cost);
  }

  /** A read goes out: the picks made so far are what it can already see. */
  startRead(): void {
    this.readsSent++;
    const keys = this.since.keys();
    for (let j = 0; j < keys.length; j++) addTo(this.batch, keys[j], this.since.get(keys[j]));
    this.since.clear();
    this.pruneNet();
  }

  /** Drops `net` entries of hosts no longer among the candidates once they outnumber them twice
   *  (pods come and go: the map must not keep every address ever seen). O(hosts), amortized. */
  pruneNet(): void {
    if (this.net.size <= 2 * this.hosts.length + 16) return;
    const keep = new Set<string>();
    for (let i = 0; i < this.hosts.length; i++) keep.add(this.hosts[i]);
    const keys = this.net.keys();
    for (let i = 0; i < keys.length; i++) if (!keep.has(keys[i])) this.net.delete(keys[i]);
  }

  /** Sends the read (one inspect call per INSPECT_CHUNK hosts); false when nothing could be sent. */
  read(now: f64): bool {
    this.fresh = new Map();
    this.failed = false;
    this.chunksLeft = 0;
    for (let start = 0; start < this.hosts.length; start += INSPECT_CHUNK) {
      const chunk = this.hosts.slice(start, min(start + INSPECT_CHUNK, this.hosts.length));
      if (!this.pool.redis.evalScript(INSPECT_SCRIPT, [this.pool.keyLoad], chunk, new InspectReply(this), now)) {
        this.failed = true;
        break;
      }
      this.chunksLeft++;
    }
    this.reading = this.chunksLeft > 0;
    return this.reading;
  }

  onChunk(ok: bool, reply: RespValue | null): void {
    if (!ok || reply === null || reply.isError()) this.failed = true;
    else {
      const items = reply.items;
      for (let i = 0; i + 1 < items.length; i += 2) this.fresh.set(items[i].str, countOf(items[i + 1].str));
    }
    this.chunksLeft--;
    if (this.chunksLeft > 0) return;
    this.onRead(!this.failed);
  }

  onRead(ok: bool): void {
    this.reading = false;
    if (!ok) {
      const keys = this.batch.keys();
      for (let i = 0; i < keys.length; i++) addTo(this.since, keys[i], this.batch.get(keys[i]));
      this.batch.clear();
      return;
    }
    this.batch.clear();
    this.readsAnswered = this.readsSent;
    this.answeredReadMs = this.lastReadMs;
    this.fleet = this.fresh;
    this.fresh = new Map();
  }
}

class InspectReply extends RedisReplyHandler {
  constructor(public target: PoolInflight) { super(); }
  onReply(ok: bool, reply: RespValue | null): void { this.target.onChunk(ok, reply); }
}

export class InflightTracker {
  private pools: Map<usize, PoolInflight> = new Map();

  private of(pool: Pool): PoolInflight {
    const k = changetype<usize>(pool);
    if (this.pools.has(k)) return this.pools.get(k);
    const p = new PoolInflight(pool);
    this.pools.set(k, p);
    return p;
  }

  /** The candidates of the pool's last request: the hosts to read on tick. */
  remember(pool: Pool | null, c: CandidateSet): void {
    if (pool === null) return;
    this.of(pool).hosts = c.hosts;
  }

  /** This VM picked `address` for a request: counted from now (the reads may not have it yet)
   *  until takeBack. null without a pool (only local leases then: Accounting's local counts). */
  notePick(pool: Pool | null, address: string, cost: f64): CountedPick | null {
    if (pool === null) return null;
    const p = this.of(pool);
    p.picked(address, cost);
    return new CountedPick(pool, address, cost, p.readsSent);
  }

  /** Takes a pick's count back, once (then nothing): its request ended, or was refused, or its
   *  lease turned out local (the local counts hold it from then on). `inRedis`: the request held a
   *  lease in Redis (PoolInflight.unpicked). */
  takeBack(pick: CountedPick | null, inRedis: bool): void {
    if (pick === null || !pick.open) return;
    pick.open = false;
    this.of(pick.pool).unpicked(pick.host, pick.cost, pick.readsSent, inRedis);
  }

  /** This VM's net picks on `address` so far (see PoolInflight.net). */
  net(pool: Pool, address: string): f64 {
    return valueOf(this.of(pool).net, address);
  }

  /** In flight on `address` from a read of its count made when this VM's net was `netAtSend`:
   *  the read plus what this VM picked and ended there since, plus local leases. */
  inflightFromRead(pool: Pool, address: string, readCount: f64, netAtSend: f64, local: LocalLeastRequest): f64 {
    return max(0.0, readCount + this.net(pool, address) - netAtSend) + <f64>local.load(address);
  }

  /** When the pool's last answered read was sent (-1e18: none yet). */
  answeredReadMs(pool: Pool): f64 { return this.of(pool).answeredReadMs; }

  inflight(pool: Pool | null, address: string, local: LocalLeastRequest): f64 {
    const own = <f64>local.load(address);
    if (pool === null) return own;
    return this.of(pool).count(address) + own;
  }

  tick(now: f64, refreshMs: f64): void {
    const all = this.pools.values();
    for (let i = 0; i < all.length; i++) {
      const p = all[i];
      if (p.reading || p.hosts.length == 0 || now - p.lastReadMs < refreshMs) continue;
      p.lastReadMs = now;
      p.startRead();
      // A chunk not sent fails the read once the chunks sent have answered (or at once: none sent).
      if (!p.read(now)) p.onRead(false);
    }
  }
}
