// The other VMs of this Envoy (one VM per worker thread: they share no memory, but they share
// the process's shared data), as predicted_latency knows them: each VM publishes, per pool, its
// open streams, its streams ended lately and its held requests on time under a shared-data key of
// its own (a slot), and reads the others'. So the workers of one Envoy predict and hold as one VM
// would (bench/RESULTS.md 12.1): a slot wait schedules a sibling's streams by their progress (not
// as average streams of another gateway); a read of the fleet's counts is corrected by what the
// siblings picked and ended since it was sent (as InflightTracker.net does for the VM's own); a
// pass plans the siblings' held requests due earlier ahead of its own (one deadline order). Other
// gateways (other Envoys) stay what the fleet's counts show, unless sloShareReplicasMs exchanges
// the records through Redis (replica_records.ts: read here as a sibling's, but never woken, the
// shared queues being per process).
// Keys: "llmlb:sib2:<pool ns>:<i>", i = 0, 1, ...: a VM claims the lowest slot whose record is
// missing, stale (not published for SIB_STALE_MS: its VM is gone) or its own, so the live slots
// are a prefix (readers stop at the first missing key). Record: "<tag> <published ms> <holding>"
// (1 while the VM holds requests: a sibling's stream end wakes it, worker_wake.ts), then a
// line per open stream "<host> <picked> <base ttft> <expected> <uncached> <first> <last> <events>
// <tpot slo> [<due>]" (tpot slo: 0 for none; due, only while a streaming request has no first
// chunk: its predicted TTFT + 1, what OpenStreams.overdue reads; tpot slo may be missing too:
// versions before them wrote 7 or 8 fields and read no line of more, so a stream not started is
// known to them by the fleet's counts, as a gateway's, until it starts),
// per stream ended in the last RECENT_END_MS "~<host> <picked> <ended>", per held request on
// time "^<host waited for> <deadline>". Times are ms on the Envoy's clock, which all its workers
// share (host/shared_clock.ts keeps them one after a wall-clock step back): published and deadlines as they are, the others as their age at the publish plus 1 (0:
// none yet, a stream's first or last chunk), a few digits where a time has 13. (Format 2: the
// "llmlb:sib:" records of an older version, with every time as it is, are not read.)
// Publishing: at once after an end, a hold, a pass after an end or a wake, a tick's pass that
// changed the held requests (HoldList.version); after a pick or a first
// token at most every PUBLISH_MIN_MS (a change within goes with the next publish or tick); every
// PROGRESS_MS while the record lists anything. Reading: at most every READ_MIN_MS, and every ms
// per READ_BYTES_PER_MS of the last read (records of many streams cost more to read); after a
// wake at once (large records: that interval less READ_MIN_MS); parsed only when a record changed.
// Bounded: MAX_SLOTS VMs; per record MAX_PUBLISHED streams and ends, the earliest
// MAX_HELD_PUBLISHED held requests.
// Failure behaviour: never throws; a line or record that does not parse, or a slot that cannot be
// claimed, is ignored (those streams are then known by the fleet's counts alone, as before).
import * as host from "../../host/calls";
import { OpenStream, SiblingStream } from "./open_streams";
import { Pool } from "../../services/lease/pool";
import { Cursor, RecordHead, RecordWriter } from "./record_bytes";
import { GaugePart, Stats } from "../../services/stats";
import { EnvoyRecords, ReplicaRecords } from "./replica_records";

/** Shared-data keys of the records of format 2 (relative times) start with this. */
const KEY_PREFIX = "llmlb:sib2:";

/** A time `t` (ms, 0: none) of a record published at `published` (whole ms), as the record holds
 *  it: its age + 1, t rounded first (so it reads back as Math.round(t), as a time written whole). */
export function ageOf(t: f64, published: f64): f64 {
  return t > 0 ? max(1.0, published + 1 - Math.round(t)) : 0;
}

/** The time a record published at `published` holds as `v` (ageOf's inverse; 0: none). */
function timeOf(v: f64, published: f64): f64 {
  return v > 0 ? published - (v - 1) : 0;
}

/** A record not published for this long is a VM gone (a live VM writes it at least every 500 ms). */
export const SIB_STALE_MS: f64 = 1000;
/** Least ms between two publishes of one pool's record (a change within waits for the next event). */
export const PUBLISH_MIN_MS: f64 = 1;
/** A record listing anything is written again after this long without a change (ms): the streams'
 *  progress (a reader extrapolates it from the last chunk meanwhile), and a heartbeat. */
export const PROGRESS_MS: f64 = 100;
/** Re-read the siblings' records at most this often (ms)... */
const READ_MIN_MS: f64 = 1;
/** ...and at most one ms per this many bytes of them: a read copies and, under load, parses every
 *  sibling's record (about 1 µs per stream line, RESULTS 12.1 "share-cost"), so records of many
 *  streams are read less often and the reads cost a worker at most a few % of its time (1,000
 *  streams open, ~40 KB: every ~10 ms). A sibling's wake reads at once unless the records are
 *  that large: then it waits for the interval less READ_MIN_MS. */
export const READ_BYTES_PER_MS: f64 = 4096;
export const MAX_SLOTS: i32 = 64;
export const MAX_PUBLISHED: i32 = 256;
/** Held requests in a record at most: the earliest deadlines (what a sibling's pass plans ahead
 *  of its own first; under an overload of hundreds held, the rest would cost a parse per read). */
export const MAX_HELD_PUBLISHED: i32 = 64;
/** How long a stream's end stays in the record (ms): well past the age of the counts a pass uses
 *  (read every 20 ms while requests are held, with each pick otherwise). */
export const RECENT_END_MS: f64 = 200;

/** The sibling VMs' held requests on time: the host each waits for, by deadline (earliest first). */
export class SiblingHolds {
  hosts: string[] = [];
  deadlines: f64[] = [];
  pools: Array<Pool | null> = [];

  add(host: string, deadline: f64, pool: Pool | null): void {
    this.hosts.push(host);
    this.deadlines.push(deadline);
    this.pools.push(pool);
    let at = this.hosts.length - 1;
    while (at > 0 && this.deadlines[at - 1] > deadline) {
      this.hosts[at] = this.hosts[at - 1];
      this.deadlines[at] = this.deadlines[at - 1];
      this.pools[at] = this.pools[at - 1];
      at--;
    }
    this.hosts[at] = host;
    this.deadlines[at] = deadline;
    this.pools[at] = pool;
  }

  get length(): i32 { return this.hosts.length; }
}

/** Writes a stream's line of a record published at `published` (no newline). */
export function writeStreamLine(w: RecordWriter, s: OpenStream, published: f64): void {
  w.text(s.address);
  w.num(ageOf(s.pickedMs, published)); w.num(s.baseTtft); w.num(s.expected); w.num(s.uncached);
  w.num(ageOf(s.firstMs, published)); w.num(ageOf(s.lastMs, published)); w.num(<f64>s.tally.events); w.num(s.sloTpot);
  const due = s.dueTtft();
  if (due >= 0) w.num(due + 1);
}

/** Parses a record into `into` (its streams by host), `ends` (its recent ends by host: pick and end
 *  ms in pairs), `held` (its held requests on time, of `pool`) and `holding` (its tag, when it
 *  holds requests), unless it is `ownTag`'s, stale or malformed; returns when it was published,
 *  -1 when it was not parsed. A line that does not parse is skipped. `shift`: ms to add to the
 *  record's times to read them on this VM's clock (another gateway's record: replica_records.ts). */
export function parseRecord(value: ArrayBuffer, ownTag: string, now: f64, into: Map<string, SiblingStream[]>,
  ends: Map<string, f64[]> | null = null, held: SiblingHolds | null = null, pool: Pool | null = null,
  holding: string[] | null = null, spare: SiblingStream[] | null = null, shift: f64 = 0): f64 {
  const c = new Cursor(Uint8Array.wrap(value));
  const tag = c.text();
  if (tag.length == 0 || tag == ownTag) return -1;
  const written = c.num();
  if (written < 0) return -1;
  const published = written + shift;
  if (now - published > SIB_STALE_MS) return -1;
  if (!c.atLineEnd && c.num() == 1 && holding !== null) holding.push(tag);
  const v = new Array<f64>(9);
  // The list of the host of the line before (a record lists a host's lines together).
  let list: SiblingStream[] | null = null;
  while (c.nextLine()) {
    const kind = c.peek();
    if (kind == 94 || kind == 126) { // "^": a held request, "~": an end
      c.pos++;
      const addr = c.host();
      list = null;
      let a = c.num();
      let b = kind == 126 ? c.num() : 0.0;
      if (addr.length == 0 || a < 0 || b < 0 || !c.atLineEnd) continue;
      if (kind == 126) { a = timeOf(a, published); b = timeOf(b, published); }
      if (kind == 94) {
        if (held !== null) held.add(addr, a + shift, pool);
      } else if (ends !== null) {
        if (!ends.has(addr)) ends.set(addr, new Array<f64>(0));
        const list = ends.get(addr);
        list.push(a);
        list.push(b);
      }
      continue;
    }
    const addr = c.host();
    if (c.newHost) list = null;
    let ok = addr.length > 0;
    for (let j = 0; ok && j < 7; j++) {
      unchecked(v[j] = c.num());
      if (unchecked(v[j]) < 0) ok = false;
    }
    unchecked(v[7] = ok && !c.atLineEnd ? c.num() : 0.0);
    unchecked(v[8] = ok && !c.atLineEnd ? c.num() : 0.0);
    if (!ok || unchecked(v[7]) < 0 || unchecked(v[8]) < 0 || !c.atLineEnd) continue;
    unchecked(v[0] = timeOf(unchecked(v[0]), published));
    unchecked(v[4] = timeOf(unchecked(v[4]), published));
    unchecked(v[5] = timeOf(unchecked(v[5]), published));
    if (list === null) {
      if (!into.has(addr)) into.set(addr, new Array<SiblingStream>(0));
      list = into.get(addr);
    }
    let st: SiblingStream;
    if (spare !== null && spare.length > 0) {
      st = spare.pop();
      st.pickedMs = unchecked(v[0]); st.baseTtft = unchecked(v[1]); st.expected = unchecked(v[2]); st.uncached = unchecked(v[3]);
      st.firstMs = unchecked(v[4]); st.lastMs = unchecked(v[5]); st.events = unchecked(v[6]); st.sloTpot = unchecked(v[7]);
    } else {
      st = new SiblingStream(unchecked(v[0]), unchecked(v[1]), unchecked(v[2]), unchecked(v[3]), unchecked(v[4]), unchecked(v[5]), unchecked(v[6]),
        unchecked(v[7]));
    }
    st.dueTtft = unchecked(v[8]) > 0 ? unchecked(v[8]) - 1 : -1.0;
    list.push(st);
  }
  return published;
}

/** Removes the empty lists of `m`. */
export function dropEmpty<T>(m: Map<string, T[]>): void {
  const keys = m.keys();
  for (let i = 0; i < keys.length; i++) if (m.get(keys[i]).length == 0) m.delete(keys[i]);
}

/** The least ms between two reads of the siblings' records after one of `bytes` (READ_BYTES_PER_MS). */
export function readInterval(bytes: i32): f64 {
  return max(READ_MIN_MS, <f64>bytes / READ_BYTES_PER_MS);
}

/**
 * What siblings changed on a host since a count read sent at `sentMs`, from their open streams and
 * recent ends there (pick and end ms in pairs): +1 per stream picked after it, -1 per stream picked
 * before it and ended after it (counted by the read, gone now). A pick or end just before the read
 * may have missed it: not corrected (the conditional lease still checks a free slot).
 */
export function netSince(streams: SiblingStream[] | null, ends: f64[] | null, sentMs: f64): f64 {
  let n: f64 = 0;
  if (streams !== null) for (let i = 0; i < streams.length; i++) if (streams[i].pickedMs > sentMs) n += 1;
  if (ends !== null) for (let i = 0; i + 1 < ends.length; i += 2) if (ends[i] <= sentMs && ends[i + 1] > sentMs) n -= 1;
  return n;
}

/** The sibling VMs' streams of one pool, and this VM's record of it. */
export class SiblingStreams {
  /** Changes when what the siblings published changes (the slot wait's cache key). */
  version: i32 = 0;
  private byHost: Map<string, SiblingStream[]> = new Map();
  /** The siblings' recent ends by host: pick and end ms, in pairs. */
  private endsByHost: Map<string, f64[]> = new Map();
  /** The siblings' held requests on time on this pool. */
  held: SiblingHolds = new SiblingHolds();
  /** Tags of the siblings that hold requests (to wake at this VM's stream ends). */
  holdingTags: string[] = [];
  /** Whether this VM holds requests (in its record's head; set before a write). */
  holding: bool = false;
  private publishedHolding: bool = false;
  /** The last record listed streams, ends or held requests (a tick republishes it). */
  private listed: bool = false;
  /** This VM's recent ends (published): host, pick and end ms. */
  private endHosts: string[] = [];
  private endTimes: f64[] = [];
  /** This VM's held requests on time on the pool (host waited for, deadline): set before a publish. */
  heldHosts: string[] = [];
  heldDeadlines: f64[] = [];
  private slot: i32 = -1;
  private lastPublishMs: f64 = -1e18;
  private dirty: bool = false;
  private lastReadMs: f64 = -1e18;
  /** The least ms between two reads, from the size of the last one (readInterval). */
  private readEveryMs: f64 = READ_MIN_MS;
  /** A sibling woke this VM: its record changed, read it at the next refresh. */
  stale: bool = false;
  private casSeen: u32[] = [];
  /** When the oldest record parsed was published (Infinity: none). */
  private oldestMs: f64 = Infinity;
  /** No sibling's record at the last read (one worker): this VM's record is its head alone, a
   *  heartbeat every SIB_STALE_MS / 2 that tells a sibling it exists, so a lone VM (the common
   *  case of one worker) does not write its streams and held requests at every change. */
  private alone: bool = true;
  /** Its part of the stats' llmlb_slo_workers_sharing (1: it sees a sibling; 0 once retired). */
  private sharing: GaugePart | null;
  private readonly prefix: string;
  private readonly writer: RecordWriter = new RecordWriter();
  /** Slot keys by index (made once). */
  private keys: string[] = [];
  /** Stream objects of earlier reads, parsed into again. */
  private spare: SiblingStream[] = [];
  /** Other gateways' VMs' records (sloShareReplicasMs; null: off), read along with the siblings'. */
  replicas: ReplicaRecords | null = null;
  private replicasSeen: i32 = -1;
  /** This VM's last record as written (what an exchange with other gateways sends). */
  lastValue: ArrayBuffer | null = null;
  /** The tags of the sibling records of the last parse (a record also received from Redis is read
   *  once). */
  private siblingTags: string[] = [];

  /** `enabled` false (sloShareWorkers): nothing published, nothing read. */
  constructor(ns: string, private tag: string, public enabled: bool = true, private pool: Pool | null = null,
    stats: Stats | null = null) {
    this.prefix = KEY_PREFIX + ns + ":";
    this.sharing = stats !== null ? stats.sloSharingPart() : null;
  }

  /** Its policy was replaced by a new configuration: no longer counted as sharing (its record
   *  still shows its open streams until they end). */
  retire(): void {
    if (this.sharing !== null) this.sharing!.retire();
    if (this.replicas !== null) this.replicas!.retire();
  }

  /** The siblings' streams on `address` (null: none known). */
  on(address: string): SiblingStream[] | null {
    // A read drops the hosts left without streams (dropEmpty): a list here is never empty.
    return this.byHost.has(address) ? this.byHost.get(address) : null;
  }

  /** The shared-data key of slot `i`. */
  private key(i: i32): string {
    while (this.keys.length <= i) this.keys.push(this.prefix + this.keys.length.toString());
    return unchecked(this.keys[i]);
  }

  /** Re-reads the siblings' records (at most every readInterval of the last read's size, sooner
   *  after a wake); parses them again only when one changed or the oldest went stale (its VM gone:
   *  its streams no longer count). */
  refresh(now: f64): void {
    if (!this.enabled) return;
    // A wake (a sibling's end) reads at once, but for large records only past the part of the
    // interval their size adds (an overload of many streams must not read at every end).
    const gap = this.stale ? this.readEveryMs - READ_MIN_MS : this.readEveryMs;
    if (now >= this.lastReadMs && now - this.lastReadMs < gap) return;
    this.stale = false;
    this.lastReadMs = now;
    const values = new Array<ArrayBuffer>(0);
    const cas = new Array<u32>(0);
    let bytes = 0;
    for (let i = 0; i < MAX_SLOTS; i++) {
      const cur = host.getSharedData(this.key(i));
      if (cur.status != host.Status.Ok) break;
      cas.push(i == this.slot ? 0 : cur.cas);
      values.push(cur.value);
      if (i != this.slot) bytes += cur.value.byteLength;
    }
    const rep = this.replicas;
    // The other gateways' records count in the read's bytes too (the blob is copied at each read).
    if (rep !== null) bytes += rep.read();
    this.readEveryMs = readInterval(bytes);
    const repVersion = rep !== null ? rep.version : 0;
    let same = cas.length == this.casSeen.length && now - this.oldestMs <= SIB_STALE_MS && repVersion == this.replicasSeen;
    for (let i = 0; same && i < cas.length; i++) if (cas[i] != this.casSeen[i]) same = false;
    if (same) return;
    this.casSeen = cas;
    this.replicasSeen = repVersion;
    // The last read's lists are emptied and its stream objects parsed into again (a read at every
    // change would otherwise allocate an object per line; nothing keeps them across a read).
    const into = this.byHost;
    const spare = this.spare;
    const lists = into.values();
    for (let k = 0; k < lists.length; k++) {
      const list = lists[k];
      for (let j = 0; j < list.length; j++) spare.push(unchecked(list[j]));
      list.length = 0;
    }
    const ends = this.endsByHost;
    const endLists = ends.values();
    for (let k = 0; k < endLists.length; k++) endLists[k].length = 0;
    const held = new SiblingHolds();
    const holding = new Array<string>(0);
    let oldest: f64 = Infinity;
    let live = 0;
    for (let i = 0; i < values.length; i++) {
      if (i == this.slot) continue;
      const at = parseRecord(values[i], this.tag, now, into, ends, held, this.pool, holding, spare);
      if (at < 0) continue;
      live++;
      if (at < oldest) oldest = at;
    }
    // Other gateways' VMs: a record this Envoy's shared data holds too (a sibling) is read once.
    let others = 0;
    if (rep !== null) {
      const local = this.siblingTags;
      local.length = 0;
      for (let i = 0; i < values.length; i++) {
        if (i == this.slot) continue;
        const h = new RecordHead(values[i]);
        if (h.ok) local.push(h.tag);
      }
      for (let j = 0; j < rep.values.length; j++) {
        if (local.includes(rep.tags[j])) continue;
        const at = parseRecord(rep.values[j], this.tag, now, into, ends, held, this.pool, null, spare, rep.shifts[j]);
        if (at < 0) continue;
        others++;
        if (at < oldest) oldest = at;
      }
    }
    this.oldestMs = oldest;
    // Hosts no record lists any more leave (pods come and go: the maps must not grow with them).
    dropEmpty<SiblingStream>(into);
    dropEmpty<f64>(ends);
    // A sibling appeared: publish at once (it learns of this VM's streams now, not at a heartbeat).
    if (this.alone && live + others > 0) { this.lastPublishMs = -1e18; this.dirty = true; }
    this.alone = live + others == 0;
    if (this.sharing !== null) this.sharing!.set(live > 0 ? 1 : 0);
    this.held = held;
    this.holdingTags = holding;
    this.version++;
  }

  /** What an exchange with other gateways sends: this VM's last record and each live sibling's,
   *  read now, each with its age. */
  envoyRecords(now: f64): EnvoyRecords {
    const out = new EnvoyRecords();
    const own = this.lastValue;
    if (own !== null) addRecord(out, own, now);
    for (let i = 0; i < MAX_SLOTS; i++) {
      const cur = host.getSharedData(this.key(i));
      if (cur.status != host.Status.Ok) break;
      if (i != this.slot) addRecord(out, cur.value, now);
    }
    return out;
  }

  /** What the siblings changed on `address` since a count read sent at `sentMs` (netSince). */
  netSince(address: string, sentMs: f64): f64 {
    if (this.byHost.size == 0 && this.endsByHost.size == 0) return 0;
    return netSince(this.on(address), this.endsByHost.has(address) ? this.endsByHost.get(address) : null, sentMs);
  }

  /** This VM's stream on `address`, picked at `pickedMs`, ended now: in the record for RECENT_END_MS. */
  ended(address: string, pickedMs: f64, now: f64): void {
    if (!this.enabled || this.lone) return;
    this.endHosts.push(address);
    this.endTimes.push(pickedMs);
    this.endTimes.push(now);
  }

  /** This VM's record of the pool changed: whether to write it now (then: write) or later (the next
   *  change or tick). Throttled unless `atOnce` (an end or a pass, which a sibling's next pass must
   *  find); alone, only a heartbeat is due. */
  due(now: f64, atOnce: bool): bool {
    if (!this.enabled) return false;
    this.dirty = true;
    const since = now - this.lastPublishMs;
    return !(this.lone ? since < SIB_STALE_MS / 2 : (!atOnce && since < PUBLISH_MIN_MS));
  }

  /** No other VM's record was live at the last read, nor in the last exchange with other gateways
   *  (whose first reply must not wait for a pick's read to make the record list this VM's streams). */
  private get lone(): bool {
    const rep = this.replicas;
    return this.alone && (rep === null || rep.values.length == 0);
  }

  /** Whether the last record listed streams, ends or held requests. */
  get listsAny(): bool { return this.listed; }

  /** Whether a tick should publish: a change waits, whether this VM holds changed, the last
   *  record listed anything and is PROGRESS_MS old (the streams' progress), or a heartbeat is due
   *  (SIB_STALE_MS / 2: the siblings must not take this VM for gone). `holding`: whether this VM
   *  holds requests now. */
  wantsTick(now: f64, holding: bool): bool {
    if (!this.enabled) return false;
    const since = now - this.lastPublishMs;
    if (since >= SIB_STALE_MS / 2) return true;
    const rep = this.replicas;
    if (rep !== null && rep.appeared) return true;
    if (this.lone) return false;
    return this.dirty || holding != this.publishedHolding || (this.listed && since >= PROGRESS_MS);
  }

  /** Writes this VM's record of the pool: its open streams (`streams`, by host), recent ends and
   *  held requests (heldHosts / heldDeadlines); alone, the head only. */
  write(streams: OpenStream[][], now: f64): void {
    const w = this.writer;
    w.reset();
    const published = Math.round(now);
    w.text(this.tag);
    w.num(published);
    w.num(this.holding ? 1 : 0);
    let lines = 0;
    const lone = this.lone;
    let n = lone ? MAX_PUBLISHED : 0;
    for (let h = 0; h < streams.length && n < MAX_PUBLISHED; h++) {
      const list = streams[h];
      for (let i = 0; i < list.length && n < MAX_PUBLISHED; i++) {
        w.line();
        writeStreamLine(w, list[i], published);
        n++;
        lines++;
      }
    }
    // Ends older than RECENT_END_MS leave (the oldest first: they were pushed in order).
    let drop = 0;
    while (drop < this.endHosts.length && (now - this.endTimes[2 * drop + 1] > RECENT_END_MS || this.endHosts.length - drop > MAX_PUBLISHED)) drop++;
    if (drop > 0) {
      this.endHosts.splice(0, drop);
      this.endTimes.splice(0, 2 * drop);
    }
    for (let i = 0; i < this.endHosts.length && !lone; i++) {
      w.line();
      w.text(this.endHosts[i], 126); // "~"
      w.num(ageOf(this.endTimes[2 * i], published));
      w.num(ageOf(this.endTimes[2 * i + 1], published));
      lines++;
    }
    for (let i = 0; i < this.heldHosts.length && i < MAX_HELD_PUBLISHED && !lone; i++) {
      w.line();
      w.text(this.heldHosts[i], 94); // "^"
      w.num(this.heldDeadlines[i]);
      lines++;
    }
    this.listed = lines > 0;
    const value = w.bytes();
    this.lastValue = value;
    if (!lone && this.replicas !== null) this.replicas!.appeared = false;
    if (this.slot >= 0) {
      const key = this.key(this.slot);
      const cur = host.getSharedData(key);
      // Still ours (another VM took the slot only if it saw our record stale): overwrite it.
      if (cur.status == host.Status.Ok && new RecordHead(cur.value).tag == this.tag
        && host.setSharedData(key, value, cur.cas) == host.Status.Ok) {
        this.done(now);
        return;
      }
      this.slot = -1;
    }
    for (let i = 0; i < MAX_SLOTS; i++) {
      const key = this.key(i);
      const cur = host.getSharedData(key);
      if (cur.status == host.Status.Ok && !claimable(cur.value, this.tag, now)) continue;
      // A missing key has no cas to check: two VMs creating it at once both write; the one
      // overwritten sees another tag at its next publish and claims another slot.
      const cas: u32 = cur.status == host.Status.Ok ? cur.cas : 0;
      if (host.setSharedData(key, value, cas) == host.Status.Ok) {
        this.slot = i;
        this.done(now);
        return;
      }
    }
  }

  private done(now: f64): void {
    this.publishedHolding = this.holding;
    this.lastPublishMs = now;
    this.dirty = false;
  }
}

/** Adds a record to an exchange's, with its age, unless its head is malformed or it is stale. */
function addRecord(out: EnvoyRecords, value: ArrayBuffer, now: f64): void {
  const h = new RecordHead(value);
  if (h.ok && now - h.published <= SIB_STALE_MS) out.add(h.tag, now - h.published, value);
}

/** Whether a slot's record may be taken: this VM's, malformed or stale. */
function claimable(value: ArrayBuffer, tag: string, now: f64): bool {
  const h = new RecordHead(value);
  return !h.ok || h.tag == tag || now - h.published > SIB_STALE_MS;
}
