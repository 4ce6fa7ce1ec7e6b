// What predicted_latency reads from Redis before a pick, sent together so they cost one round
// trip: the prefix levels (MGET, as endpoint_metrics' prefix term) and, for a pool of at most
// FRESH_COUNTS_MAX candidates, the candidates' in-flight counts (ZMSCORE of the pool's load), so
// the pick sees every gateway's streams as they are now rather than as the last tick's read saw
// them (inflightRefreshMs old: what makes several gateways' predictions worse than one's,
// bench/RESULTS.md 12.1), and when each was last picked by any gateway (ZMSCORE of the pool's
// `seen`, stamped by every lease: lua/lib.lua mark_picked), which breaks ties between alike pods
// as global_least_request does. The count a pick uses is the read's plus what this VM picked and
// ended on that host since the read was sent (InflightTracker.net).
// Failure behaviour: a read that fails, passes the pick deadline or answers something else leaves
// its part empty (no prefix signal; the tracker's counts); the pick runs once both parts have
// answered; a reply after the deadline is ignored.
import { RedisReplyHandler } from "../../redis/client";
import { RespValue } from "../../redis/resp";
import { mgetValues } from "../endpoint_metrics/prefix_io";
import { countOf } from "../../services/metrics_view/inflight";

/** Candidates whose counts are read with every pick (a larger pool uses the tracker's counts). */
export const FRESH_COUNTS_MAX: i32 = 64;

/** The numbers of a ZMSCORE reply, one per host, each read by `read` (a member absent: ""); null
 *  when the reply is not an array of `n`. */
function zmscoreNumbers(ok: bool, reply: RespValue | null, n: i32, read: (text: string) => f64): f64[] | null {
  if (!ok || reply === null || reply.isError() || reply.items.length != n) return null;
  const out = new Array<f64>(n);
  for (let i = 0; i < n; i++) {
    const item = reply.items[i];
    out[i] = read(item.isNull() ? "" : item.str);
  }
  return out;
}

/** The counts of a ZMSCORE reply of the pool's load (countOf: 0 for a host not there, or a value
 *  that is not a finite count); null when the reply is not an array of `n`. */
export function zmscoreCounts(ok: bool, reply: RespValue | null, n: i32): f64[] | null {
  return zmscoreNumbers(ok, reply, n, countOf);
}

/** The last-pick stamps of a ZMSCORE reply of `seen` (-1, the oldest, for a host never stamped or
 *  a value that is not a finite number); null when the reply is not an array of `n`. */
export function zmscoreStamps(ok: bool, reply: RespValue | null, n: i32): f64[] | null {
  return zmscoreNumbers(ok, reply, n, (text: string): f64 => {
    const v = F64.parseFloat(text);
    return isFinite(v) ? v : -1.0;
  });
}

/** Called once every read has answered. */
export abstract class PickReadsDone {
  abstract onReads(reads: PickReads): void;
}

/** One pick's reads: the parts sent, their answers. */
export class PickReads {
  values: string[] = [];
  counts: f64[] | null = null;
  /** When each candidate was last picked (zmscoreStamps), read with the counts; null: unknown. */
  stamps: f64[] | null = null;
  private prefixAnswered: bool = false;
  private countsAnswered: bool = false;
  private stampsAnswered: bool = false;
  /** InflightTracker.net of each candidate when the counts read was sent. */
  netAtSend: f64[] = [];
  /** When the counts read was sent. */
  sentMs: f64 = 0;
  private waiting: i32 = 0;

  /** `done`: null when nothing will be sent. */
  constructor(public keys: string[], private done: PickReadsDone | null) {}

  /** A part is about to be sent: one more answer to wait for (cancel() if it could not be). */
  expect(): void { this.waiting++; }
  cancel(): void { this.waiting--; }

  /** Whether any part is in flight. */
  get pending(): bool { return this.waiting > 0; }

  /** The prefix read's answer (a second one, after its deadline, is ignored). */
  onPrefix(ok: bool, reply: RespValue | null): void {
    if (this.prefixAnswered) return;
    this.prefixAnswered = true;
    this.values = mgetValues(ok, reply, this.keys.length);
    this.answered();
  }

  /** The counts read's answer (a second one, after its deadline, is ignored). */
  onCounts(ok: bool, reply: RespValue | null): void {
    if (this.countsAnswered) return;
    this.countsAnswered = true;
    this.counts = zmscoreCounts(ok, reply, this.netAtSend.length);
    this.answered();
  }

  /** The stamps read's answer (a second one, after its deadline, is ignored). */
  onStamps(ok: bool, reply: RespValue | null): void {
    if (this.stampsAnswered) return;
    this.stampsAnswered = true;
    this.stamps = zmscoreStamps(ok, reply, this.netAtSend.length);
    this.answered();
  }

  private answered(): void {
    this.waiting--;
    const done = this.done;
    if (this.waiting == 0 && done !== null) done.onReads(this);
  }
}

export class PrefixPart extends RedisReplyHandler {
  constructor(public reads: PickReads) { super(); }
  onReply(ok: bool, reply: RespValue | null): void { this.reads.onPrefix(ok, reply); }
}

export class CountsPart extends RedisReplyHandler {
  constructor(public reads: PickReads) { super(); }
  onReply(ok: bool, reply: RespValue | null): void { this.reads.onCounts(ok, reply); }
}

export class StampsPart extends RedisReplyHandler {
  constructor(public reads: PickReads) { super(); }
  onReply(ok: bool, reply: RespValue | null): void { this.reads.onStamps(ok, reply); }
}
