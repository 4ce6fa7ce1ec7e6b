// The streams this VM has open on each host of one pool, as predicted_latency knows them: pick
// time, expected output tokens (max_tokens, else expectedOutputTokens), the predicted TTFT
// without a slot wait, first chunk and SSE events seen so far. From them, the wait for a batch
// slot on a host (slot_wait.ts): when the host's streams fill its slots, when does one free?
// Streams of other gateways are only known as a count (the fleet's in flight from Redis, minus
// this VM's streams there): each counts as an average stream of that host, half way through its
// service time while slots are free for it, its whole service time when queued behind them; the
// average is this VM's mean decode time on the host (EWMA of first chunk -> end), else the
// model's TPOT x expectedOutputTokens, plus the host's predicted TTFT without a wait.
// Also the prefill ahead: uncached prompt tokens of the streams not started yet (a TTFT feature).
// Failure behaviour: none on the request path (no throw; a missing entry is a no-op).
import { HOSTS_KEPT } from "../../util/host_maps";
import { ResponseTally } from "./response_scan";
import { remainingDecode, slotWait } from "./slot_wait";

/** Weight of the newest finished stream in a host's mean decode time. */
const DECODE_ALPHA: f64 = 0.1;

/** How long a host's computed slot wait is reused (ms): under overload a full pod is asked about
 *  by many requests a ms, and the schedule costs O(streams x log slots) (bench/RESULTS.md 12.1).
 *  Its streams' progress in that time (a few tokens at most) is below the prediction's error. */
export const WAIT_REUSE_MS: f64 = 2;

/** The last slot wait, prefill ahead and slacks computed for a host, and what they were computed
 *  from. `version` counts the changes of this VM's streams on the host. */
class CachedWait {
  version: i32 = 0;
  at: f64 = -1e18;
  waitVersion: i32 = -1;
  waitSibVersion: i32 = -1;
  fleetInflight: f64 = 0;
  slots: i32 = 0;
  tpot: f64 = 0;
  wait: f64 = 0;
  prefillAt: f64 = -1e18;
  prefillVersion: i32 = -1;
  prefillSibVersion: i32 = -1;
  prefill: f64 = 0;
  slackAt: f64 = -1e18;
  slackVersion: i32 = -1;
  slackSibVersion: i32 = -1;
  slackTpot: f64 = 0;
  /** TPOT slack (ms) of the host's streams on time with a TPOT SLO, ascending (harm). */
  slacks: f64[] = new Array<f64>(0);

  /** Whether a value computed at `at` from this VM's streams as of `version` and the siblings' as
   *  of `sibAt` may be reused `now`, the siblings' records being at `sibVersion`: within
   *  WAIT_REUSE_MS, neither changed since. */
  reusable(at: f64, version: i32, sibAt: i32, sibVersion: i32, now: f64): bool {
    const age = now - at;
    return age >= 0 && age < WAIT_REUSE_MS && version == this.version && sibAt == sibVersion;
  }
}

/** A sibling VM's stream as its record showed it (sibling_streams.ts). */
export class SiblingStream {
  /** A streaming request's predicted TTFT at its pick (ms; -1: not streamed, or not said). */
  dueTtft: f64 = -1;
  constructor(public pickedMs: f64, public baseTtft: f64, public expected: f64, public uncached: f64,
    public firstMs: f64, public lastMs: f64, public events: f64, public sloTpot: f64 = 0) {}
}

/** One open stream: what the pick knew (the model's features too), and what the response showed. */
export class OpenStream {
  tally: ResponseTally = new ResponseTally();
  firstMs: f64 = 0;
  /** When the last body chunk came (0: none yet). */
  lastMs: f64 = 0;
  endMs: f64 = 0;
  status: i32 = 0;
  /** The request asked for a streamed response: its first chunk is its first token (overdue). */
  streaming: bool = false;
  /** The share of its prompt the prefix tree said the host held at the pick (the trust, cache_trust.ts). */
  said: f64 = 0;
  constructor(public address: string, public pickedMs: f64, public expected: f64, public uncached: f64,
    public inflight: f64, public wait: f64, public baseTtft: f64, public predTtft: f64, public predTpot: f64,
    public prefillAhead: f64 = 0, public sloTpot: f64 = 0) {}

  /** Its predicted TTFT while it is a streaming request without a first chunk (what overdue reads
   *  and a sibling record's due field carries, SiblingStream.dueTtft), else -1; a stream picked
   *  before anything was learned (NaN) has none. */
  dueTtft(): f64 {
    return this.streaming && this.firstMs == 0 && isFinite(this.predTtft) ? max(0.0, this.predTtft) : -1.0;
  }
}

/** Adds to `out` a stream's TPOT slack (ms): what a stall may take before the stream, predicted
 *  to meet its TPOT SLO `sloTpot` now, misses it; nothing for a stream without one or already late. */
function pushSlack(out: f64[], sloTpot: f64, expected: f64, events: f64, firstMs: f64, lastMs: f64, tpot: f64, now: f64): void {
  if (!(sloTpot > 0) || !(expected > 1)) return;
  const gaps = expected - 1.0;
  const spent = firstMs > 0 ? now - firstMs : 0.0;
  const left = firstMs > 0 ? remainingDecode(expected, events, now - firstMs, now - lastMs, tpot) : gaps * tpot;
  const slack = sloTpot * gaps - spent - left;
  if (slack >= 0) out.push(slack);
}

/** Other gateways' streams on a host scheduled at most, per batch slot and in all (the fleet's count
 *  is Redis's: a corrupt or token-weighted count must not loop a billion times). */
export const OTHERS_PER_SLOT_MAX: i32 = 64;
export const OTHERS_MAX: f64 = 65536;

export class OpenStreams {
  private byHost: Map<string, OpenStream[]> = new Map();
  private decodeMs: Map<string, f64> = new Map();
  private busy: f64[] = new Array<f64>(0);
  private pendingNow: f64[] = new Array<f64>(0);
  private pendingService: f64[] = new Array<f64>(0);
  private slotTimes: f64[] = new Array<f64>(0);
  private cached: Map<string, CachedWait> = new Map();
  private sibBusy: f64[] = new Array<f64>(0);

  /** This VM's open streams, by host (what sibling_streams.ts publishes). */
  lists(): OpenStream[][] { return this.byHost.values(); }

  add(s: OpenStream): void {
    if (!this.byHost.has(s.address)) this.byHost.set(s.address, new Array<OpenStream>(0));
    this.byHost.get(s.address).push(s);
    this.cacheOf(s.address).version++;
  }

  /** The stream ended (however): no longer open; a full stream teaches the host's decode time. */
  remove(s: OpenStream): void {
    if (s.firstMs > 0 && s.endMs >= s.firstMs && s.status == 200) {
      const d = s.endMs - s.firstMs;
      if (!this.decodeMs.has(s.address) && this.decodeMs.size >= HOSTS_KEPT) this.forgetIdle();
      const prev = this.decodeMs.has(s.address) ? this.decodeMs.get(s.address) : d;
      this.decodeMs.set(s.address, prev + DECODE_ALPHA * (d - prev));
    }
    if (!this.byHost.has(s.address)) return;
    const list = this.byHost.get(s.address);
    const at = list.indexOf(s);
    if (at < 0) return;
    list.splice(at, 1);
    if (list.length == 0) {
      this.byHost.delete(s.address);
      if (this.cached.has(s.address)) this.cached.delete(s.address);
    } else {
      this.cacheOf(s.address).version++;
    }
  }

  /** Uncached prompt tokens of the streams on `address` not started yet (prefill ahead): this
   *  VM's and its siblings' (`sib`, as of `sibVersion`). With `now` (>= 0), reused within
   *  WAIT_REUSE_MS while the streams are the same. */
  prefillAhead(address: string, now: f64 = -1, sib: SiblingStream[] | null = null, sibVersion: i32 = 0): f64 {
    if (!this.byHost.has(address) && sib === null) return 0;
    const c = now >= 0 ? this.cacheOf(address) : null;
    if (c !== null && c.reusable(c.prefillAt, c.prefillVersion, c.prefillSibVersion, sibVersion, now)) return c.prefill;
    let t: f64 = 0;
    if (this.byHost.has(address)) {
      const list = this.byHost.get(address);
      for (let i = 0; i < list.length; i++) if (list[i].firstMs == 0) t += list[i].uncached;
    }
    if (sib !== null) for (let i = 0; i < sib.length; i++) if (sib[i].firstMs == 0) t += sib[i].uncached;
    if (c !== null) { c.prefillAt = now; c.prefillVersion = c.version; c.prefillSibVersion = sibVersion; c.prefill = t; }
    return t;
  }

  /**
   * How far behind the model `address` runs: the longest any streaming request there without a
   * first chunk yet has waited past its predicted TTFT, this VM's and its siblings' (`sib`; their
   * records carry it as `dueTtft`), 0 if none. An engine that cannot admit what it was sent (its
   * KV cache full before its batch slots) shows here at once, while the TTFT model learns it only
   * from first tokens that come late. Non-streaming requests, whose first chunk is their end, and
   * streams picked without a prediction are left out.
   */
  overdue(address: string, now: f64, sib: SiblingStream[] | null = null): f64 {
    let late: f64 = 0;
    if (this.byHost.has(address)) {
      const list = this.byHost.get(address);
      for (let i = 0; i < list.length; i++) {
        const due = list[i].dueTtft();
        if (due >= 0) late = max(late, now - list[i].pickedMs - due);
      }
    }
    if (sib !== null) {
      for (let i = 0; i < sib.length; i++) {
        const s = sib[i];
        if (s.dueTtft >= 0 && s.firstMs == 0) late = max(late, now - s.pickedMs - s.dueTtft);
      }
    }
    return late;
  }

  /**
   * How many streams on `address` with a TPOT SLO, this VM's and its siblings' (`sib`, as of
   * `sibVersion`), a stall of `stallMs` (a prompt's prefill admitted into their engine step) would
   * make miss it: those predicted to meet it now (time since their first chunk, then the tokens
   * left at `tpot` each) by less than the stall. A stream not started yet counts from now, whole.
   * The host's slacks are sorted once and reused within WAIT_REUSE_MS while its streams and `tpot`
   * stay the same (a stream on pace keeps its slack): a binary search per candidate.
   */
  harm(address: string, stallMs: f64, tpot: f64, now: f64, sib: SiblingStream[] | null = null, sibVersion: i32 = 0): f64 {
    if (!(stallMs > 0) || !(tpot > 0) || (!this.byHost.has(address) && sib === null)) return 0;
    const c = this.cacheOf(address);
    if (!(c.reusable(c.slackAt, c.slackVersion, c.slackSibVersion, sibVersion, now) && c.slackTpot == tpot)) {
      const out = c.slacks;
      out.length = 0;
      if (this.byHost.has(address)) {
        const list = this.byHost.get(address);
        for (let i = 0; i < list.length; i++) {
          const s = list[i];
          pushSlack(out, s.sloTpot, s.expected, <f64>s.tally.events, s.firstMs, s.lastMs, tpot, now);
        }
      }
      if (sib !== null) {
        for (let i = 0; i < sib.length; i++) {
          const s = sib[i];
          pushSlack(out, s.sloTpot, s.expected, s.events, s.firstMs, s.lastMs, tpot, now);
        }
      }
      if (out.length > 1) out.sort((a: f64, b: f64): i32 => a < b ? -1 : (a > b ? 1 : 0));
      c.slackAt = now; c.slackVersion = c.version; c.slackSibVersion = sibVersion; c.slackTpot = tpot;
    }
    // The slacks below the stall: the first index whose slack is >= it.
    const sl = c.slacks;
    let lo = 0, hi = sl.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (unchecked(sl[mid]) < stallMs) lo = mid + 1; else hi = mid;
    }
    return <f64>lo;
  }

  /** Hosts with a decode time or a cached wait kept (at most HOSTS_KEPT, plus those with streams). */
  get hostsKept(): i32 { return max(this.decodeMs.size, this.cached.size); }

  /** Drops what is kept of the hosts without an open stream of this VM: decode times and cached
   *  waits are kept for at most HOSTS_KEPT hosts (util/host_maps.ts) beyond those. */
  private forgetIdle(): void {
    const d = this.decodeMs.keys();
    for (let i = 0; i < d.length; i++) if (!this.byHost.has(d[i])) this.decodeMs.delete(d[i]);
    const c = this.cached.keys();
    for (let i = 0; i < c.length; i++) if (!this.byHost.has(c[i])) this.cached.delete(c[i]);
  }

  private cacheOf(address: string): CachedWait {
    if (this.cached.has(address)) return this.cached.get(address);
    if (this.cached.size >= HOSTS_KEPT) this.forgetIdle();
    const c = new CachedWait();
    this.cached.set(address, c);
    return c;
  }

  /** This VM's open streams on `address`. */
  count(address: string): i32 {
    return this.byHost.has(address) ? this.byHost.get(address).length : 0;
  }

  /**
   * Predicted ms until a batch slot frees on `address` for a new request: this VM's streams there,
   * the sibling VMs' (`sib`, as of `sibVersion`), and the rest of the fleet's in flight as average
   * streams of other gateways. `tpot`: the host's predicted TPOT at a full batch; `baseTtft`: its
   * predicted TTFT without a wait (a queued stream's prefill); `fallbackTokens`: output tokens of
   * an unknown stream before any finished.
   */
  waitFor(address: string, fleetInflight: f64, slots: i32, tpot: f64, baseTtft: f64, fallbackTokens: f64, now: f64,
    sib: SiblingStream[] | null = null, sibVersion: i32 = 0): f64 {
    if (slots <= 0 || !(tpot > 0)) return 0;
    const own = this.count(address);
    // The fleet's count comes from Redis (any number there): at most OTHERS_PER_SLOT_MAX per slot
    // (OTHERS_MAX in all) are scheduled, one loop step each; a pod that far behind is out of reach
    // for any SLO.
    const fleetOthers = <i32>min(max(0.0, Math.round(fleetInflight) - <f64>own), min(<f64>slots * <f64>OTHERS_PER_SLOT_MAX, OTHERS_MAX));
    const sibN = sib !== null ? sib.length : 0;
    if (own + max(fleetOthers, sibN) < slots) return 0;
    // The same streams and counts within WAIT_REUSE_MS: the wait computed then, less the time
    // since. (baseTtft, this request's own prefill estimate, only sizes other gateways' streams:
    // the one of a request less than WAIT_REUSE_MS earlier stands in for it.)
    const c = this.cacheOf(address);
    if (c.reusable(c.at, c.waitVersion, c.waitSibVersion, sibVersion, now)
      && c.fleetInflight == fleetInflight && c.slots == slots && c.tpot == tpot) return max(0.0, c.wait - (now - c.at));
    const wait = this.computeWait(address, own, fleetOthers, slots, tpot, baseTtft, fallbackTokens, now, sib);
    c.at = now; c.waitVersion = c.version; c.waitSibVersion = sibVersion; c.fleetInflight = fleetInflight;
    c.slots = slots; c.tpot = tpot; c.wait = wait;
    return wait;
  }

  /**
   * The list schedule itself (waitFor without the reuse): O(streams x log slots). `fleetOthers`:
   * the fleet's streams on the host that are not this VM's. The siblings' streams not started yet
   * all count (one just picked may not be in the fleet's count yet); of their started ones, at
   * most what the count leaves, the longest remaining first (the others most likely ended since
   * their record); the rest of the count as averages.
   */
  computeWait(address: string, own: i32, fleetOthers: i32, slots: i32, tpot: f64, baseTtft: f64, fallbackTokens: f64, now: f64,
    sib: SiblingStream[] | null = null): f64 {
    const base = baseTtft > 0 ? baseTtft : 0.0;
    // Scratch arrays reused across calls (no allocation per candidate).
    const busy = this.busy;
    const pendingNow = this.pendingNow;
    const pendingService = this.pendingService;
    busy.length = 0;
    pendingNow.length = 0;
    pendingService.length = 0;
    const list = own > 0 ? this.byHost.get(address) : null;
    if (list !== null) {
      for (let i = 0; i < list.length; i++) {
        const s = list[i];
        if (s.firstMs > 0) busy.push(remainingDecode(s.expected, <f64>s.tally.events, now - s.firstMs, now - s.lastMs, tpot));
      }
    }
    let others = fleetOthers;
    if (sib !== null) {
      let pendingSib = 0;
      const started = this.sibBusy;
      started.length = 0;
      for (let i = 0; i < sib.length; i++) {
        const s = sib[i];
        if (s.firstMs == 0) pendingSib++;
        else started.push(remainingDecode(s.expected, s.events, now - s.firstMs, now - s.lastMs, tpot));
      }
      const keep = min(started.length, max(0, fleetOthers - pendingSib));
      if (keep < started.length) started.sort((a: f64, b: f64): i32 => a > b ? -1 : (a < b ? 1 : 0));
      for (let i = 0; i < keep; i++) busy.push(started[i]);
      others = max(0, fleetOthers - pendingSib - keep);
    }
    if (others > 0) {
      const service = base + (this.decodeMs.has(address) ? this.decodeMs.get(address) : max(0.0, fallbackTokens - 1.0) * tpot);
      // Others are older than this VM's pending streams as often as not: they hold slots first,
      // and queue ahead of them (so they are listed before this VM's pending streams).
      for (let k = 0; k < others; k++) {
        if (busy.length < slots) busy.push(service / 2);
        else { pendingNow.push(service / 2); pendingService.push(service); }
      }
    }
    // Not started yet: the siblings' (in their pick order), then this VM's.
    if (sib !== null) {
      for (let i = 0; i < sib.length; i++) {
        const s = sib[i];
        if (s.firstMs == 0) this.pending(s.pickedMs, s.baseTtft, s.expected, tpot, now);
      }
    }
    if (list !== null) {
      for (let i = 0; i < list.length; i++) {
        const s = list[i];
        if (s.firstMs == 0) this.pending(s.pickedMs, s.baseTtft, s.expected, tpot, now);
      }
    }
    return slotWait(busy, pendingNow, pendingService, slots, this.slotTimes);
  }

  /** A stream not started yet: its time left if it takes a free slot now (what is left of its base
   *  TTFT, then its decode), its whole service if it queues for one. */
  private pending(pickedMs: f64, baseTtft: f64, expected: f64, tpot: f64, now: f64): void {
    const decode = max(0.0, expected - 1.0) * tpot;
    this.pendingNow.push(max(0.0, pickedMs + baseTtft - now) + decode);
    this.pendingService.push(baseTtft + decode);
  }
}
