// The records of other gateways' VMs (sloShareReplicasMs): Envoy's shared data ends at its process,
// so a VM's record of a pool (sibling_streams.ts: its open streams, recent ends and held requests)
// also goes to Redis (lua/records.lua), at most every sloShareReplicasMs, in one call that stores
// it and returns every other VM's, of every gateway. SiblingStreams then reads them as it reads a
// sibling worker's: a pick sees the streams another gateway opened on a pod (slot wait, prefill
// interference, count corrections), not only their count (bench/RESULTS.md 12.1d).
// Clocks: a record's times are its writer's clock. Redis returns each record with the time it
// stored it and its own time, so a record stored `now - stored` ms before the reply was published
// about then on this VM's clock: `shift` turns the writer's times into this VM's (the gateways'
// clocks need not agree; the error is the one-way latency, under a ms in one zone).
// Period: sloShareReplicasMs at most; DISCOVERY_MS while no other gateway's VM shows (a lone
// gateway pays two calls a second); longer when the bytes moved would pass BYTES_PER_MS per VM.
// Failure behaviour: never throws; a failed call keeps the last records, which age out
// (SIB_STALE_MS) as a gone VM's do; a malformed record is skipped.
import { RedisReplyHandler, LuaScript } from "../../redis/client";
import { RespValue } from "../../redis/resp";
import { Pool } from "../../services/lease/pool";
import { Stats } from "../../services/stats";
import * as gen from "../../generated/lua";
import { ScriptText } from "../../services/lease/lua_text";
import { LUA_LIBRARY } from "../../services/lease/scripts";
import { Cursor } from "./record_bytes";

export const RECORDS_SCRIPT = new LuaScript("records", new ScriptText("records", gen.RECORDS_DEFS), gen.RECORDS_SHA, LUA_LIBRARY);

/** Other VMs' records one exchange returns at most (as MAX_SLOTS siblings). */
const MAX_RECORDS = "64";
/** Tags an exchange may ask Redis not to return (records.lua MAX_SKIP). */
const MAX_SKIP = 64;
/** While the last exchange showed no other gateway's VM, the next one waits this long (ms): a lone
 *  gateway (or the lone Envoy of a deployment) pays a call per half second, and another gateway
 *  is found within that. */
export const DISCOVERY_MS: f64 = 500;
/** The bytes an exchange moves (this VM's record sent, the others' received) are spread to at most
 *  this many per ms and VM (1 MB/s): many VMs or many streams lengthen the period instead of
 *  growing Redis's traffic with the square of the VMs (the records then age, the gain fades). */
export const BYTES_PER_MS: f64 = 1024;

/** The ms until the next exchange after one that moved `bytes` and returned `others` records. */
export function exchangeInterval(everyMs: f64, bytes: f64, others: i32): f64 {
  if (others == 0) return max(everyMs, DISCOVERY_MS);
  return max(everyMs, bytes / BYTES_PER_MS);
}

class ExchangeReply extends RedisReplyHandler {
  constructor(public r: ReplicaRecords, public sentMs: f64) { super(); }
  onReply(ok: bool, reply: RespValue | null): void { this.r.onReply(ok, reply, this.sentMs); }
}

/** The other VMs' records of one pool, from the last exchange. */
export class ReplicaRecords {
  /** The records (their bytes), their writers' tags and the ms to add to their times. */
  values: ArrayBuffer[] = [];
  tags: string[] = [];
  shifts: f64[] = [];
  /** Changes with each exchange's reply (SiblingStreams parses them again). */
  version: i32 = 0;
  private inFlight: bool = false;
  private lastMs: f64 = -1e18;
  /** The ms from one exchange to the next (exchangeInterval of the last; everyMs before any). */
  intervalMs: f64;
  /** The bytes of the record the last exchange sent. */
  private sentBytes: f64 = 0;
  /** The last reply showed another gateway's VM where the one before showed none: this VM's record
   *  (its head alone while it saw no other VM) is to list its streams and go out at once (the next
   *  publish or tick; cleared by SiblingStreams.write). */
  appeared: bool = false;
  /** What this VM adds to llmlb_slo_replicas_seen (its last reply's records; 0 once retired). */
  private counted: i32 = 0;
  private retired: bool = false;
  private readonly key: string;
  private readonly staleMs: string;

  constructor(private pool: Pool, private tag: string, private everyMs: f64, staleMs: f64, private stats: Stats | null,
    /** The local clock (host.nowMillis outside tests). */
    private clock: () => f64) {
    this.key = pool.ns + ":rec";
    this.intervalMs = everyMs;
    this.staleMs = (<i64>staleMs).toString();
  }

  /** Whether an exchange is due (none in flight, the last sent intervalMs ago). */
  due(now: f64): bool {
    return !this.inFlight && now - this.lastMs >= this.intervalMs;
  }

  /** Stores `record` (this VM's, as it writes it to shared data) and asks for the others' but
   *  those of `skip` (its sibling workers': their records come through shared data). */
  send(record: ArrayBuffer, now: f64, skip: string[] = []): void {
    this.lastMs = now;
    this.sentBytes = <f64>record.byteLength;
    const args: string[] = [this.tag, String.UTF8.decode(record), this.staleMs, MAX_RECORDS];
    for (let i = 0; i < skip.length && i < MAX_SKIP; i++) args.push(skip[i]);
    this.inFlight = this.pool.redis.evalScript(RECORDS_SCRIPT, [this.key], args, new ExchangeReply(this, now), now);
    if (!this.inFlight && this.stats !== null) this.stats!.redisBackgroundFailures();
  }

  /** Its policy was replaced by a new configuration: no longer counted in the gauge. */
  retire(): void {
    this.retired = true;
    this.count(0);
  }

  private count(n: i32): void {
    const stats = this.stats;
    if (stats === null) return;
    const now = this.retired ? 0 : n;
    if (now != this.counted) stats.sloReplicas(<i64>(now - this.counted));
    this.counted = now;
  }

  onReply(ok: bool, reply: RespValue | null, sentMs: f64): void {
    this.inFlight = false;
    if (!ok || reply === null || reply.isError() || reply.items.length == 0) {
      if (this.stats !== null) this.stats!.redisBackgroundFailures();
      return;
    }
    const items = reply.items;
    const redisNow = parseFloat(items[0].str);
    if (isNaN(redisNow)) return;
    const now = this.clock();
    const values = new Array<ArrayBuffer>(0);
    const tags = new Array<string>(0);
    const shifts = new Array<f64>(0);
    let bytes = this.sentBytes;
    for (let i = 1; i + 1 < items.length; i += 2) {
      const stored = parseFloat(items[i].str);
      const b = items[i + 1].bytes;
      bytes += <f64>b.length;
      // A copy: the reply's bytes live in the host's buffer of this callback only.
      const value = b.slice(0).buffer;
      const c = new Cursor(Uint8Array.wrap(value));
      const tag = c.text();
      const published = c.num();
      if (isNaN(stored) || tag.length == 0 || published < 0) continue;
      values.push(value);
      tags.push(tag);
      // Stored redisNow - stored ms before Redis ran the call, which it did about half-way between
      // the send and now (as the client's clock probe assumes).
      shifts.push((sentMs + now) / 2 - (redisNow - stored) - published);
    }
    this.intervalMs = exchangeInterval(this.everyMs, bytes, values.length);
    if (this.values.length == 0 && values.length > 0) {
      this.appeared = true;
      this.lastMs = -1e18;
    }
    this.values = values;
    this.tags = tags;
    this.shifts = shifts;
    this.count(values.length);
    this.version++;
  }
}
