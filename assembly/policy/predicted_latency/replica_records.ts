// The records of other gateways' VMs (sloShareReplicasMs): Envoy's shared data ends at its process,
// so the records of a pool of every VM of this Envoy (sibling_streams.ts: open streams, recent ends
// and held requests) also go to Redis (lua/records.lua), at most every sloShareReplicasMs, in one
// call that stores them and returns every other gateway's. SiblingStreams then reads those as it
// reads a sibling worker's: a pick sees the streams another gateway opened on a pod (slot wait,
// prefill interference, count corrections), not only their count (bench/RESULTS.md 12.1d, 12.1e).
// One exchange per Envoy, not per VM: whichever VM finds the exchange due first (at a pick's
// start, a publish or a tick) claims it in the shared data (CLAIM_KEY, by its cas), sends every
// live record of the Envoy's VMs with its age, and writes the reply into the shared data
// (BLOB_KEY), where every VM reads it at its next refresh. So the calls and the bytes received do
// not grow with the workers (one call per period per Envoy; RESULTS 12.1e). Where shared data is
// unavailable a VM exchanges on its own (its record alone).
// Clocks: a record's times are its writer's clock. Redis stores each record at its time less the
// record's age and returns each with that time and its own, so a record stored `now - stored` ms
// before the reply was published about then on this Envoy's clock (which its workers share,
// host/shared_clock.ts): the
// blob holds each record's publish time on this clock, and `shift` turns its times into this one
// (the gateways' clocks need not agree; the error is the one-way latency, under a ms in one zone).
// Period: sloShareReplicasMs at most; DISCOVERY_MS while no other gateway's VM shows (a lone
// gateway pays two calls a second); longer when the bytes moved would pass BYTES_PER_MS per Envoy.
// Failure behaviour: never throws; a failed call keeps the last records, which age out
// (SIB_STALE_MS) as a gone VM's do; a malformed record or blob entry is skipped.
import * as host from "../../host/calls";
import { RedisReplyHandler, LuaScript } from "../../redis/client";
import { RespValue } from "../../redis/resp";
import { Pool } from "../../services/lease/pool";
import { GaugePart, Stats } from "../../services/stats";
import * as gen from "../../generated/lua";
import { ScriptText } from "../../services/lease/lua_text";
import { LUA_LIBRARY } from "../../services/lease/scripts";
import { Cursor, RecordHead, RecordWriter } from "./record_bytes";

export const RECORDS_SCRIPT = new LuaScript("records", new ScriptText("records", gen.RECORDS_DEFS), gen.RECORDS_SHA, LUA_LIBRARY);

/** Other VMs' records one exchange returns at most (as MAX_SLOTS siblings). */
const MAX_RECORDS = "64";
/** Records one exchange stores at most (records.lua MAX_STORE; MAX_SLOTS VMs per Envoy). */
export const MAX_STORE: i32 = 64;
/** Shared-data keys (+ pool ns): when this Envoy's next exchange is due ("<ms>", its clock), and
 *  the other gateways' records of its last reply. */
const CLAIM_KEY = "llmlb:rxc:";
const BLOB_KEY = "llmlb:rxr:";
/** While the last exchange showed no other gateway's VM, the next one waits this long (ms): a lone
 *  gateway (or the lone Envoy of a deployment) pays a call per half second, and another gateway
 *  is found within that. */
export const DISCOVERY_MS: f64 = 500;
/** The bytes an exchange moves (this Envoy's records sent, the others' received) are spread to at
 *  most this many per ms and Envoy (1 MB/s): many gateways or many streams lengthen the period
 *  instead of growing Redis's traffic with the square of the gateways (the records then age, the
 *  gain fades). */
export const BYTES_PER_MS: f64 = 1024;

/** The longest the byte bound spaces two exchanges (ms): a claim further away than this and the
 *  claim's hold is a clock that jumped back, and does not hold. */
export const MAX_INTERVAL_MS: f64 = 60000;

/** Whether a claim (the ms its exchange is next due, on this Envoy's clock) no longer holds at
 *  `now`: its time passed, it is unreadable, or it lies further ahead than any period and hold
 *  (a clock that jumped back). */
export function claimLapsed(claim: string, now: f64, holdMs: f64): bool {
  const next = parseFloat(claim);
  return isNaN(next) || now >= next || next - now > holdMs + MAX_INTERVAL_MS;
}

/** The ms until the next exchange after one that moved `bytes` and returned `others` records. */
export function exchangeInterval(everyMs: f64, bytes: f64, others: i32): f64 {
  if (others == 0) return max(everyMs, DISCOVERY_MS);
  return min(MAX_INTERVAL_MS, max(everyMs, bytes / BYTES_PER_MS));
}

class ExchangeReply extends RedisReplyHandler {
  constructor(public r: ReplicaRecords, public sentMs: f64) { super(); }
  onReply(ok: bool, reply: RespValue | null): void { this.r.onReply(ok, reply, this.sentMs); }
}

/** The records an exchange sends: this Envoy's VMs', each with its tag and age (ms). */
export class EnvoyRecords {
  tags: string[] = [];
  ages: f64[] = [];
  values: ArrayBuffer[] = [];

  add(tag: string, age: f64, value: ArrayBuffer): void {
    if (this.tags.length >= MAX_STORE || this.tags.includes(tag)) return;
    this.tags.push(tag);
    this.ages.push(max(0.0, Math.round(age)));
    this.values.push(value);
  }
}

/** Writes records and their publish times on this clock into a blob (parseBlob reads it back). */
export function writeBlob(w: RecordWriter, values: ArrayBuffer[], at: f64[]): ArrayBuffer {
  w.reset();
  for (let i = 0; i < values.length; i++) {
    w.num(at[i]);
    w.num(<f64>values[i].byteLength);
    w.line();
    w.raw(values[i]);
    w.line();
  }
  return w.bytes();
}

/** Reads the records of a blob ("<publish ms on this clock> <length>\n<record>\n" each) into
 *  `values` and their publish times into `at`; stops at the first malformed entry. */
export function parseBlob(blob: ArrayBuffer, values: ArrayBuffer[], at: f64[]): void {
  const b = Uint8Array.wrap(blob);
  const c = new Cursor(b);
  while (c.pos < b.length) {
    const t = c.num();
    const len = c.num();
    if (t < 0 || len < 0 || c.peek() != 10) return;
    const from = c.pos + 1;
    // Compared as f64: a length past the blob (from another writer, or cut short) must not wrap
    // the i32 end below the start and move the cursor before the buffer.
    if (<f64>from + len > <f64>b.length) return;
    const to = from + <i32>len;
    values.push(blob.slice(from, to));
    at.push(t);
    c.pos = to + 1;
  }
}

/** The other gateways' VMs' records of one pool, from this Envoy's last exchange. */
export class ReplicaRecords {
  /** The records (their bytes), their writers' tags and the ms to add to their times. */
  values: ArrayBuffer[] = [];
  tags: string[] = [];
  shifts: f64[] = [];
  /** Changes with each new set of records (SiblingStreams parses them again). */
  version: i32 = 0;
  private inFlight: bool = false;
  private lastMs: f64 = -1e18;
  /** The ms from this VM's exchange to the next (exchangeInterval of its last; everyMs before). */
  intervalMs: f64;
  /** The bytes of the records the last exchange sent. */
  private sentBytes: f64 = 0;
  /** The last records showed another gateway's VM where the ones before showed none: this VM's
   *  record (its head alone while it saw no other VM) is to list its streams and go out at once
   *  (the next publish or tick; cleared by SiblingStreams.write). */
  appeared: bool = false;
  /** What this VM adds to llmlb_slo_replicas_seen (its last records; 0 once retired). */
  private seen: GaugePart | null;
  /** The blob's cas this VM read or wrote last (0: none). */
  private blobCas: u32 = 0;
  private readonly key: string;
  /** records.lua's index of the hash (tag -> stored ms): a call reads only the records it returns. */
  private readonly atKey: string;
  private readonly claimKey: string;
  private readonly blobKey: string;
  private readonly staleMs: string;
  private readonly writer: RecordWriter = new RecordWriter();

  constructor(private pool: Pool, private tag: string, private everyMs: f64, staleMs: f64, private stats: Stats | null,
    /** The local clock (host.nowMillis outside tests). */
    private clock: () => f64) {
    this.seen = stats !== null ? stats.sloReplicasPart() : null;
    this.key = pool.ns + ":rec";
    this.atKey = pool.ns + ":rec:at";
    this.claimKey = CLAIM_KEY + pool.ns;
    this.blobKey = BLOB_KEY + pool.ns;
    this.intervalMs = everyMs;
    this.staleMs = (<i64>staleMs).toString();
  }

  /** Whether an exchange is due: none in flight from this VM, its own last intervalMs ago, and
   *  this Envoy's (the claim's time passed; no claim, or no shared data: due). */
  due(now: f64): bool {
    if (this.inFlight || now - this.lastMs < this.intervalMs) return false;
    const cur = host.getSharedData(this.claimKey);
    return cur.status != host.Status.Ok || claimLapsed(String.UTF8.decode(cur.value), now, this.holdMs());
  }

  /** How long a claim holds while its call is out: the Redis timeout and its sweep (a VM gone
   *  with its call out leaves the exchange to the others after that). */
  private holdMs(): f64 { return max(this.everyMs, DISCOVERY_MS) + <f64>this.pool.redis.timeoutMs + 1000; }

  /** Claims this Envoy's exchange (due() was true): false when another VM claimed it first. */
  claim(now: f64): bool {
    const cur = host.getSharedData(this.claimKey);
    if (cur.status != host.Status.Ok && cur.status != host.Status.NotFound) return true; // no shared data
    // Another VM may have claimed it since due() read it: its claim holds, whatever the cas.
    if (cur.status == host.Status.Ok && !claimLapsed(String.UTF8.decode(cur.value), now, this.holdMs())) return false;
    const cas: u32 = cur.status == host.Status.Ok ? cur.cas : 0;
    const st = host.setSharedData(this.claimKey, String.UTF8.encode((<i64>(now + this.holdMs())).toString()), cas);
    return st != host.Status.CasMismatch;
  }

  /** Sets when this Envoy's next exchange is due (no cas: only the claimer writes it meanwhile). */
  private release(next: f64): void {
    host.setSharedData(this.claimKey, String.UTF8.encode((<i64>Math.ceil(next)).toString()), 0);
  }

  /** Stores `mine` (this Envoy's VMs' records, this VM's first) and asks for the others'. */
  send(mine: EnvoyRecords, now: f64): void {
    this.lastMs = now;
    if (mine.tags.length == 0) { this.release(now + this.everyMs); return; }
    const args: string[] = [this.staleMs, MAX_RECORDS, mine.tags.length.toString()];
    let bytes: f64 = 0;
    for (let i = 0; i < mine.tags.length; i++) {
      args.push(mine.tags[i]);
      args.push((<i64>mine.ages[i]).toString());
      args.push(String.UTF8.decode(mine.values[i]));
      bytes += <f64>mine.values[i].byteLength;
    }
    this.sentBytes = bytes;
    this.inFlight = this.pool.redis.evalScript(RECORDS_SCRIPT, [this.key, this.atKey], args, new ExchangeReply(this, now), now);
    if (!this.inFlight) {
      this.release(now + this.everyMs);
      if (this.stats !== null) this.stats!.redisBackgroundFailures();
    }
  }

  /** Its policy was replaced by a new configuration: no longer counted in the gauge. */
  retire(): void {
    if (this.seen !== null) this.seen!.retire();
  }

  onReply(ok: bool, reply: RespValue | null, sentMs: f64): void {
    this.inFlight = false;
    if (!ok || reply === null || reply.isError() || reply.items.length == 0) {
      this.release(sentMs + this.everyMs);
      if (this.stats !== null) this.stats!.redisBackgroundFailures();
      return;
    }
    const items = reply.items;
    const redisNow = parseFloat(items[0].str);
    if (isNaN(redisNow)) { this.release(sentMs + this.everyMs); return; }
    const now = this.clock();
    const values = new Array<ArrayBuffer>(0);
    const at = new Array<f64>(0);
    let bytes = this.sentBytes;
    for (let i = 1; i + 1 < items.length; i += 2) {
      const stored = parseFloat(items[i].str);
      const b = items[i + 1].bytes;
      bytes += <f64>b.length;
      if (isNaN(stored)) continue;
      // A copy: the reply's bytes live in the host's buffer of this callback only.
      values.push(b.slice(0).buffer);
      // Stored redisNow - stored ms before Redis ran the call, which it did about half-way between
      // the send and now (as the client's clock probe assumes).
      at.push(Math.round((sentMs + now) / 2 - (redisNow - stored)));
    }
    const appeared = this.adopt(values, at);
    this.intervalMs = exchangeInterval(this.everyMs, bytes, this.values.length);
    // Another gateway showed where none did: the next exchange at once (this Envoy's records list
    // their streams from now on), else one interval after this one.
    this.release(appeared ? now : sentMs + this.intervalMs);
    // The Envoy's other VMs read the records at their next refresh.
    if (host.setSharedData(this.blobKey, writeBlob(this.writer, values, at), 0) == host.Status.Ok) {
      const cur = host.getSharedData(this.blobKey);
      if (cur.status == host.Status.Ok) this.blobCas = cur.cas;
    }
  }

  /** Reads the records another VM of this Envoy received, when they changed since the last;
   *  returns the bytes read (the blob is copied out of the shared data at each call). */
  read(): i32 {
    const cur = host.getSharedData(this.blobKey);
    if (cur.status != host.Status.Ok) return 0;
    const bytes = cur.value.byteLength;
    if (cur.cas == this.blobCas) return bytes;
    this.blobCas = cur.cas;
    const values = new Array<ArrayBuffer>(0);
    const at = new Array<f64>(0);
    parseBlob(cur.value, values, at);
    this.adopt(values, at);
    return bytes;
  }

  /** Takes records (their publish times on this clock in `at`) as the current ones: each one's tag
   *  and shift from its head (a malformed head: skipped). Returns whether they show another
   *  gateway's VM where the last ones showed none (`appeared`: this VM's own period restarts). */
  private adopt(values: ArrayBuffer[], at: f64[]): bool {
    const kept = new Array<ArrayBuffer>(0);
    const tags = new Array<string>(0);
    const shifts = new Array<f64>(0);
    for (let i = 0; i < values.length; i++) {
      const h = new RecordHead(values[i]);
      if (!h.ok || h.tag == this.tag) continue;
      kept.push(values[i]);
      tags.push(h.tag);
      shifts.push(at[i] - h.published);
    }
    const appeared = this.values.length == 0 && kept.length > 0;
    if (appeared) {
      this.appeared = true;
      this.lastMs = -1e18;
    }
    this.values = kept;
    this.tags = tags;
    this.shifts = shifts;
    if (this.seen !== null) this.seen!.set(kept.length);
    this.version++;
    return appeared;
  }
}
