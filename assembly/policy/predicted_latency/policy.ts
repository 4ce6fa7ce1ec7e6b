// predicted_latency: picks, per request, the host predicted to meet the request's latency SLO
// (TTFT / TPOT, headers x-slo-ttft-ms / x-slo-tpot-ms or the route's defaults), from a model each
// host learns online from this plugin's own observations and every gateway shares through Redis.
//   prefix read (MGET of the prefix tree, as endpoint_metrics' prefix term) and, for at most 64
//   candidates, their in-flight counts (ZMSCORE), in one round trip (pick_reads.ts) -> per host:
//   uncached prompt tokens, requests in flight (fleet counts) -> predicted TTFT / TPOT (model.ts, store.ts)
//   -> load gate (maxRequestCount / priority limit) -> choice by headroom (choose.ts) -> a lease
//   on the chosen host (lua/charge.lua), the prefix levels pointed at it. With late binding
//   (sloHoldMs) a request whose pod has no free slot is held (late_binding.ts), and a lease on a
//   slot this VM counts as free is taken only if the fleet's count there still has room.
// Observations: TTFT = pick applied to the stream -> first response body chunk (streams); TPOT = (last chunk - first) /
// (tokens - 1), tokens from usage or the SSE events; a non-streaming response (first chunk = end)
// teaches each part the total (TTFT + TPOT x (tokens - 1)) minus the other part's current
// prediction (one token: the TTFT only).
// Config: slo settings (config/slo_settings.ts), prefix settings (keys), the common lease keys.
// Failure behaviour: no candidates -> Pass; nothing learned yet -> fewest in flight; every host
// over the limit -> shed; no host meets the SLO -> shed if low priority, else the least late;
// Redis down -> this VM's model and a local lease.
import { Policy } from "../policy";
import { Verdict } from "../../services/request/verdict";
import { LbRequest, PRIORITY_LOW } from "../../services/request/request";
import { Services } from "../../services/services";
import { LbConfig } from "../../config/lb_config";
import { SLO_PICK_BEST_FIT, SLO_PICK_TPOT_FIT } from "../../config/slo_settings";
import { isNumberText } from "../../config/text_checks";
import { CandidateSet } from "../../services/candidates/candidates";
import { MetricsCache } from "../../services/metrics_view/metrics_cache";
import { MetricsRuntime } from "../../services/metrics_view/runtime";
import * as host from "../../host/calls";
import { KeyOptions, keyOptionsFrom, prefixLevelKeys } from "../../prefix/keys";
import { PrefixWrites, recordPrefix } from "../endpoint_metrics/prefix_io";
import { prefixScores } from "../endpoint_metrics/prefix_signal";
import { baseObservation, clipObservation, ttftFeatures, tpotFeatures } from "./model";
import { ModelStore, PoolModel } from "./store";
import { chooseBySlo, Draws, NO_MODEL, PICK_BEST_FIT, PICK_MOST_HEADROOM, PICK_TPOT_FIT, SHED } from "./choose";
import { Evaluation, fewestInflight, lateReserve, lateToFreeSlot, recomputeCost, RequestTerms, waitForSlot } from "./evaluation";
import { OpenStream } from "./open_streams";
import { CountsPart, FRESH_COUNTS_MAX, PickReads, PickReadsDone, PrefixPart, StampsPart } from "./pick_reads";
import { HeldRequest, HoldList } from "./hold";
import { HeldJudge, LateBinding } from "./late_binding";
import { Pool } from "../../services/lease/pool";
import { Accounting, ChargeRefused } from "../../services/lease/accounting";
import { HostQueue } from "./pass_free";
import { trustObservation } from "./cache_trust";
import { WorkerWake, vmWakeTag } from "./worker_wake";
import { SiblingHolds } from "./sibling_streams";

/** Policies made in this VM so far: each one's tag (sibling records, wake queue) is its own. */
let policySeq: i32 = 0;

/** Requests in flight on a host by the tracker's counts (plus this VM's local leases), plus the
 *  plan's held requests waiting for it. */
class TrackerQueue extends HostQueue {
  constructor(public runtime: MetricsRuntime, public accounting: Accounting, public store: ModelStore) { super(); }
  at(pool: Pool | null, address: string, ahead: Map<string, f64> | null): f64 {
    const counted = this.runtime.inflight.inflight(pool, address, this.accounting.local);
    if (pool === null) return counted + planned(ahead, address);
    // The sibling VMs' picks and ends since the tracker's read was sent (it saw neither).
    const sib = this.store.of(pool).siblings.netSince(address, this.runtime.inflight.answeredReadMs(pool));
    return max(0.0, counted + sib) + planned(ahead, address);
  }
}

/** Held requests of the plan waiting for `address` (0 without a plan). */
function planned(ahead: Map<string, f64> | null, address: string): f64 {
  return ahead !== null && ahead.has(address) ? ahead.get(address) : 0.0;
}

/** How old the fleet's counts may get while requests are held (the tracker's read, every tick at most). */
const HOLD_COUNTS_MS: f64 = 20;

/** Redis refused a charge made on the condition of a free slot (another VM took it first): `held`
 *  is the request as it would be held again (arrival, terms, reads; `host` the refused one). */
class SlotRefused extends ChargeRefused {
  constructor(public policy: PredictedLatencyPolicy, public held: HeldRequest) { super(); }
  onFull(_r: LbRequest, load: f64): void { this.policy.holdAgain(this.held, load); }
}

/** Late binding's view of the policy (predictions, choice, lease of a held request). */
class Judge extends HeldJudge {
  /** Set by the policy's constructor once the policy is whole. */
  policy: PredictedLatencyPolicy | null = null;
  evaluate(h: HeldRequest, heldMs: f64, ahead: Map<string, f64>): Evaluation | null {
    return this.policy!.evaluate(h.r, h.c, h.reads, heldMs, h.terms, ahead);
  }
  commit(h: HeldRequest, e: Evaluation, heldMs: f64): Verdict { return this.policy!.commit(h.r, h.c, h.reads, e, heldMs, h.terms); }
  freeByOwnRead(h: HeldRequest, ahead: Map<string, f64>): i32 { return this.policy!.freeByOwnRead(h, ahead); }
  siblingHolds(): SiblingHolds | null { return this.policy!.store.siblingHolds(host.nowMillis()); }
}

class ReadsDone extends PickReadsDone {
  constructor(public policy: PredictedLatencyPolicy, public r: LbRequest, public c: CandidateSet) { super(); }
  onReads(reads: PickReads): void { this.policy.pickAfterReads(this.r, this.c, reads); }
}

/** A request's SLO in ms from its header, else the route default (0: none). The value must be a
 *  plain positive number of ms: the head of "1s" or "1_000" (what parseFloat takes) is not the
 *  SLO the client meant, and 1 ms would shed a low-priority request no pod can serve that fast. */
function sloOf(header: string, def: f64): f64 {
  if (header.length == 0) return def;
  const v = host.getHeader(host.MapType.RequestHeaders, header);
  if (v === null) return def;
  const text = v.trim();
  if (!isNumberText(text)) return def;
  const n = F64.parseFloat(text);
  return isFinite(n) && n > 0 ? n : def;
}

function fmt(v: f64): string {
  return isNaN(v) ? "na" : (Math.round(v * 10) / 10).toString();
}

export class PredictedLatencyPolicy extends Policy {
  readonly runtime: MetricsRuntime;
  readonly store: ModelStore;
  private readonly keyOptions: KeyOptions;
  private readonly writes: PrefixWrites = new PrefixWrites();
  private observations: Map<usize, OpenStream> = new Map();
  /** Counts by the in-flight tracker (a held request's own read is older than its next one). */
  private readonly tracker: TrackerQueue;
  /** Late binding's held requests (sloHoldMs). */
  private readonly late: LateBinding;
  /** Wakes the sibling VMs holding requests when a stream ends (and is woken by them). */
  private readonly wake: WorkerWake;

  constructor(cfg: LbConfig, services: Services) {
    super(cfg, services);
    const runtime = services.metricsRuntime(cfg.metrics.latencyAlpha);
    this.runtime = runtime;
    // The in-flight tracker's reads of the pool's counts (no scrape with the default source).
    runtime.register(new MetricsCache(cfg.metrics), cfg.usesRedis());
    policySeq++;
    // <VM>.<policy>: the VM part names the VM's wake queue (worker_wake.ts).
    const tag = vmWakeTag(services.accounting.vmTag) + "." + policySeq.toString(36);
    const held = new HoldList();
    const store = new ModelStore(cfg.slo, services.stats, tag, held);
    this.store = store;
    this.keyOptions = keyOptionsFrom(cfg.prefix);
    const tracker = new TrackerQueue(runtime, services.accounting, store);
    this.tracker = tracker;
    const judge = new Judge();
    this.late = new LateBinding(cfg.slo, services, tracker, judge, held);
    this.wake = new WorkerWake(cfg.slo.shareWorkers && cfg.slo.holdMs > 0, tag);
    judge.policy = this;
  }

  decide(r: LbRequest): Verdict {
    const c = r.candidates();
    if (c.size == 0) return Verdict.Pass;
    this.runtime.inflight.remember(r.pool, c);
    this.store.of(r.pool).refresh(host.nowMillis());
    const pool = r.pool;
    if (pool === null) return this.pick(r, c, new PickReads([], null));
    const reads = new PickReads(this.prefixKeys(r), new ReadsDone(this, r, c));
    const now = host.nowMillis();
    // The reads wait at most the pick deadline, as the lease call does (then: no prefix signal,
    // the tracker's counts).
    const waitMs = pool.pickWaitMs();
    if (reads.keys.length > 0) {
      reads.expect();
      if (!pool.redis.command(["MGET"].concat(reads.keys), new PrefixPart(reads), now, waitMs)) { reads.cancel(); reads.keys = []; }
    }
    if (c.size <= FRESH_COUNTS_MAX) {
      const inflight = this.runtime.inflight;
      const net = new Array<f64>(c.size);
      for (let i = 0; i < c.size; i++) net[i] = inflight.net(pool, c.hosts[i]);
      reads.netAtSend = net;
      reads.sentMs = now;
      reads.expect();
      if (!pool.redis.command(["ZMSCORE", pool.keyLoad].concat(c.hosts), new CountsPart(reads), now, waitMs)) reads.cancel();
      reads.expect();
      if (!pool.redis.command(["ZMSCORE", pool.keySeen].concat(c.hosts), new StampsPart(reads), now, waitMs)) reads.cancel();
    }
    return reads.pending ? Verdict.Pending : this.pick(r, c, reads);
  }

  private prefixKeys(r: LbRequest): string[] {
    const pool = r.pool;
    const body = r.body;
    if (pool === null || body === null) return [];
    const json = body.json();
    if (json === null) return [];
    return prefixLevelKeys(json, this.keyOptions, pool.ns).keys;
  }

  /** Redis answered the reads (or failed: no prefix signal, the tracker's counts); runs on the root context. */
  pickAfterReads(r: LbRequest, c: CandidateSet, reads: PickReads): void {
    if (!r.port.enterAsync()) return;
    r.port.finishAsync(this.pick(r, c, reads));
  }

  private pick(r: LbRequest, c: CandidateSet, reads: PickReads): Verdict {
    const s = this.cfg.slo;
    const sloTtft = sloOf(s.ttftHeader, s.ttftMs);
    const now = host.nowMillis();
    // A wait in the gateway-side queue is part of the client's TTFT: it counts as time held.
    const since = r.queuedAtMs > 0 && r.queuedAtMs < now ? r.queuedAtMs : now;
    const waited = now - since;
    const deadline = sloTtft > 0 ? since + sloTtft : Infinity;
    const body = r.body;
    // The client's output budget (max_tokens or its newer names), at most MAX_OUTPUT_TOKENS.
    let expected: f64 = body !== null ? body.maxOutputTokens() : 0;
    if (!(expected > 0)) expected = <f64>s.expectedOutputTokens;
    // One set of random draws per request: a held request evaluated again and again explores (or
    // breaks a tie) as it would have once, not once per evaluation.
    const rng = this.services.rng;
    const terms = new RequestTerms(sloTtft, sloOf(s.tpotHeader, s.tpotMs),
      body !== null && !body.truncated ? <f64>((body.promptChars() + 3) / 4) : 0, expected,
      new Draws(rng.nextFloat(), <u32>(rng.next() >> 32)));
    terms.streaming = body !== null && body.streams();
    const e = this.evaluate(r, c, reads, waited, terms, this.late.aheadOf(deadline));
    if (e === null) return Verdict.Rejected;
    if (this.late.tryHold(r, c, reads, since, terms, e)) {
      this.store.heldChanged(now);
      return Verdict.Pending;
    }
    return this.commit(r, c, reads, e, waited, terms);
  }

  /**
   * Predictions for every candidate and the choice, for a request held heldMs so far (its TTFT
   * SLO is that much shorter). null: the request was shed (every host over the limit, or no host
   * meets a sheddable request's SLO); r.port.shed was called.
   */
  evaluate(r: LbRequest, c: CandidateSet, reads: PickReads, heldMs: f64, t: RequestTerms,
    ahead: Map<string, f64> | null): Evaluation | null {
    const pool = r.pool;
    const counts = this.freshCounts(pool, reads);
    const s = this.cfg.slo;
    const slots = <f64>s.batchSlots;
    const n = c.size;
    const promptTokens = t.promptTokens;
    const expected = t.expected;
    const sloTtft = t.sloTtft;
    const sloTpot = t.sloTpot;
    const draws = t.draws;
    const share = prefixScores(reads.values, c);
    const model = this.store.of(r.pool);
    const models = model.modelsFor(c.hosts);
    const e = new Evaluation(n, expected);
    const now = host.nowMillis();
    const fallbackTokens = <f64>s.expectedOutputTokens;
    const siblings = model.siblings;
    siblings.refresh(now);
    let anyEligible = false;
    // Prefill interference (tpot_fit only): what this request's prefill would do to the streams there
    // (with a TPOT SLO, or without any SLO; a TTFT SLO alone picks by headroom).
    const harm: f64[] | null = s.interference && s.pick == SLO_PICK_TPOT_FIT && (sloTpot > 0 || sloTtft <= 0) ? new Array<f64>(n) : null;
    e.harm = harm;
    e.picked = reads.stamps;
    for (let i = 0; i < n; i++) {
      const q = this.queueAt(pool, c, i, reads, counts, ahead);
      const m = models[i];
      e.inflight[i] = q;
      e.said[i] = share[i];
      e.uncached[i] = promptTokens * (1.0 - share[i] * model.trustOf(c.hosts[i]));
      const sib = siblings.on(c.hosts[i]);
      e.prefill[i] = model.streams.prefillAhead(c.hosts[i], now, sib, siblings.version);
      e.base[i] = m.predictTtft(e.uncached[i], q, slots, 0, e.prefill[i]);
      // Without the batch slots no slot wait is predicted: how far behind the model the host runs
      // stands in for it (a full KV cache, a queue the model has not seen yet).
      e.wait[i] = slots > 0
        ? model.streams.waitFor(c.hosts[i], q, <i32>slots, m.predictTpot(slots, slots), e.base[i], fallbackTokens, now, sib, siblings.version)
        : model.streams.overdue(c.hosts[i], now, sib);
      e.ttft[i] = e.base[i] + e.wait[i];
      // What the choice compares: a wait for a slot is the least certain part (it depends on when
      // the running requests end), so it counts (1 + sloQueueMargin) times.
      e.decideTtft[i] = e.ttft[i] + s.queueMargin * e.wait[i];
      e.tpot[i] = m.predictTpot(q, slots);
      if (harm !== null) {
        // The stall on the pod's decoding streams before they next get a token: the model's TTFT
        // for this request's uncached tokens and for the prefills ahead of it there (picked, not
        // started): those stall the same streams first, and their harm was judged without this one.
        const stall = e.base[i] - m.predictTtft(0, q, slots, 0, 0);
        harm[i] = model.streams.harm(c.hosts[i], stall, e.tpot[i], now, sib, siblings.version);
      }
      e.eligible[i] = r.limit <= 0 || q + <f64>r.cost <= <f64>r.limit;
      if (e.eligible[i]) anyEligible = true;
    }
    if (!anyEligible) { r.port.shed("limit"); return null; }
    if (sloTtft <= 0 && sloTpot <= 0) recomputeCost(e, models, slots);
    // Held: what is left of the TTFT SLO (a hair above 0 once spent, so no host meets it).
    const ttftLeft = sloTtft > 0 ? max(1e-3, sloTtft - heldMs) : 0.0;
    e.sloTtft = sloTtft;
    e.ttftLeft = ttftLeft;
    const choice = chooseBySlo(e.decideTtft, e.tpot, e.eligible, ttftLeft, sloTpot,
      pickMode(s.pick), s.exploration, r.priority == PRIORITY_LOW, expected, draws, harm, e.recompute, e.inflight, e.uncached, e.picked);
    if (choice.index == SHED) { r.port.shed("slo_unmet"); return null; }
    e.choice = choice;
    e.at = choice.index == NO_MODEL ? fewestInflight(e.inflight, e.eligible, draws.pick, e.picked) : choice.index;
    e.unmet = choice.reason == "slo_unmet";
    if (this.late.on && e.unmet && !waitForSlot(e, ttftLeft, sloTpot)) {
      lateToFreeSlot(e, slots, ttftLeft, sloTpot, pickMode(s.pick), draws, lateReserve(heldMs - sloTtft));
    }
    return e;
  }

  /** The pick's own read of the counts (plus this VM's changes since), until the tracker has a
   *  newer one (a held request is evaluated again and again); null: the tracker's counts. */
  private freshCounts(pool: Pool | null, reads: PickReads): f64[] | null {
    return pool !== null && reads.counts !== null && reads.sentMs > this.runtime.inflight.answeredReadMs(pool) ? reads.counts : null;
  }

  /** Requests in flight on candidate i by the newest counts, plus the held ones ahead of this
   *  request (earlier deadline) waiting for that host: they will be there first. */
  private queueAt(pool: Pool | null, c: CandidateSet, i: i32, reads: PickReads, counts: f64[] | null, ahead: Map<string, f64> | null): f64 {
    const address = c.hosts[i];
    if (counts === null || pool === null) return this.tracker.at(pool, address, ahead);
    const sib = this.store.of(pool).siblings.netSince(address, reads.sentMs);
    return max(0.0, this.runtime.inflight.inflightFromRead(pool, address, counts[i], reads.netAtSend[i], this.services.accounting.local) + sib)
      + planned(ahead, address);
  }

  /** Late binding: whether a candidate of a held request has a free slot by its own read of the
   *  counts (1 / 0), or -1 when the tracker's counts are newer (HeldJudge.freeByOwnRead). */
  freeByOwnRead(h: HeldRequest, ahead: Map<string, f64>): i32 {
    const pool = h.r.pool;
    const counts = this.freshCounts(pool, h.reads);
    if (counts === null) return -1;
    const slots = <f64>this.cfg.slo.batchSlots;
    for (let i = 0; i < h.c.size; i++) if (this.queueAt(pool, h.c, i, h.reads, counts, ahead) < slots) return 1;
    return 0;
  }

  /**
   * Sends the request to the chosen host: its open stream, the prefix levels, the lease. With late
   * binding, a request sent to a free slot (by this VM's view) is charged only if the fleet's count
   * there is still below modelBatchSlots: another VM may have taken the slot since this VM's counts
   * were read, and the request would then queue in the engine. Refused, it is held again
   * (holdAgain).
   */
  commit(r: LbRequest, c: CandidateSet, reads: PickReads, e: Evaluation, heldMs: f64, t: RequestTerms): Verdict {
    const at = e.at;
    const now = host.nowMillis();
    const model = this.store.of(r.pool);
    const chosen = c.hosts[at];
    const b = e.base[at];
    const stream = new OpenStream(chosen, now, e.expected, e.uncached[at], e.inflight[at], e.wait[at], isFinite(b) ? max(0.0, b) : 0.0,
      e.ttft[at], e.tpot[at], e.prefill[at], t.sloTpot);
    stream.streaming = t.streaming;
    stream.said = e.said[at];
    this.observations.set(changetype<usize>(r), stream);
    model.streams.add(stream);
    model.publish(now);
    this.runtime.notePick(r, chosen);
    if (e.choice.avoided) this.services.stats.sloInterferenceAvoided();
    if (reads.keys.length > 0) recordPrefix(this.cfg, r, reads.keys, reads.values, chosen, this.writes);
    // The TTFT reported is the client's as predicted now: the time held plus the pod's.
    const reason = "predicted_latency:" + e.choice.reason + ":ttft=" + fmt(heldMs + e.ttft[at]) + ":tpot=" + fmt(e.tpot[at]) + ":q=" + fmt(e.inflight[at])
      + ":wait=" + fmt(e.wait[at]) + (e.harm !== null ? ":harm=" + fmt(e.harm![at]) : "") + (heldMs > 0 ? ":held=" + fmt(heldMs) : "");
    const slots = <i64>this.cfg.slo.batchSlots;
    if (!this.late.canHold(heldMs) || e.inflight[at] >= <f64>slots || this.cfg.costMode != "count") {
      return this.services.accounting.acquireHost(r, c, chosen, reason);
    }
    const limit = r.limit > 0 && r.limit < slots ? r.limit : slots;
    const again = new HeldRequest(r, c, reads, now - heldMs, t);
    again.host = chosen;
    return this.services.accounting.acquireHost(r, c, chosen, reason, limit, new SlotRefused(this, again));
  }

  /**
   * A charge on the condition of a free slot was refused (Redis counts `load` on `h.host`): the
   * request is held again, as it was (its arrival, terms and reads), with the host's count from the
   * refusal in its reads so that it does not go there again before a newer read. Its open stream
   * and pick are undone. The stream stayed paused; it waits for the next pass (late_binding.ts).
   */
  holdAgain(h: HeldRequest, load: f64): void {
    const r = h.r;
    const o = this.takeStream(r);
    if (o !== null) this.store.of(r.pool).streamWithdrawn(o, host.nowMillis());
    this.runtime.inflight.takeBack(r.counted, false);
    this.services.stats.sloSlotRefused();
    this.noteRefusedCount(h, load);
    // Replaced by a new configuration meanwhile: as the requests it held then, to the route's own balancing.
    if (!this.late.holdAgain(h)) r.port.resumePass();
  }

  /** The reads of `h` now say what the refusal said of `h.host` (the other hosts as this VM counts
   *  them now, without the plan), as a read made now. */
  private noteRefusedCount(h: HeldRequest, load: f64): void {
    const pool = h.r.pool;
    if (pool === null) return;
    const reads = h.reads;
    const c = h.c;
    const local = this.services.accounting.local;
    const counts = new Array<f64>(c.size);
    const net = new Array<f64>(c.size);
    const fresh = this.freshCounts(pool, reads);
    for (let i = 0; i < c.size; i++) {
      const a = c.hosts[i];
      counts[i] = a == h.host ? (isFinite(load) && load >= 0 ? load : <f64>this.cfg.slo.batchSlots)
        : this.queueAt(pool, c, i, reads, fresh, null) - <f64>local.load(a);
      net[i] = this.runtime.inflight.net(pool, a);
    }
    reads.counts = counts;
    reads.netAtSend = net;
    reads.sentMs = host.nowMillis();
  }

  /** The open stream of `r` (its observation), no longer this request's; null: none. The caller
   *  takes it off the pool's streams (an end, or a lease refused). */
  private takeStream(r: LbRequest): OpenStream | null {
    const k = changetype<usize>(r);
    if (!this.observations.has(k)) return null;
    const o = this.observations.get(k);
    this.observations.delete(k);
    return o;
  }

  onTick(now: f64): void {
    if (this.late.held.length == 0) {
      this.store.onTick(now);
      return;
    }
    // Other gateways' streams end too: while requests are held, the fleet's counts are read more often.
    this.runtime.inflight.tick(now, HOLD_COUNTS_MS);
    this.late.release(now);
    this.store.heldChanged(now, true);
    // The records for the sibling VMs: the streams' progress, a heartbeat.
    this.store.onTick(now);
  }

  /** Replaced by a new configuration: the requests held go on at once, to the route's own balancing. */
  retire(): void {
    this.late.retire();
    this.store.retire();
  }

  onResponseHeaders(r: LbRequest, status: i32): void {
    const k = changetype<usize>(r);
    if (this.observations.has(k)) this.observations.get(k).status = status;
  }

  wantsResponseBody(): bool { return true; }

  onResponseBody(r: LbRequest, chunk: Uint8Array, endOfStream: bool): void {
    const k = changetype<usize>(r);
    if (!this.observations.has(k)) return;
    const o = this.observations.get(k);
    const now = host.nowMillis();
    if (o.firstMs == 0 && chunk.length > 0) {
      o.firstMs = now;
      this.store.of(r.pool).publish(now);
    }
    if (chunk.length > 0) o.lastMs = now;
    o.tally.scan(chunk);
    if (endOfStream) o.endMs = now;
  }

  onStreamDone(r: LbRequest): void {
    this.runtime.ended(r);
    this.late.forget(r); // ended while held (client gone): never sent
    this.learn(r);
    // A stream ended: a batch slot may have freed for a held request, here or in a sibling VM.
    const now = host.nowMillis();
    if (this.late.held.length > 0) this.releaseHeld(now);
    if (this.wake.token != 0) {
      const sib = this.store.of(r.pool).siblings;
      sib.refresh(now);
      this.wake.wake(sib.holdingTags);
    }
  }

  /** A sibling VM's stream ended (its wake): a pass over the held requests with its new record. */
  onQueueReady(token: u32, now: f64): bool {
    if (token == 0 || token != this.wake.token) return false;
    this.wake.drain();
    this.store.invalidate();
    if (this.late.held.length > 0) this.releaseHeld(now);
    return true;
  }

  /** A pass over the held requests; the siblings see what is still held. */
  private releaseHeld(now: f64): void {
    this.late.release(now);
    this.store.heldChanged(now);
  }

  private learn(r: LbRequest): void {
    const o = this.takeStream(r);
    if (o === null) return;
    const model = this.store.of(r.pool);
    model.streamEnded(o, host.nowMillis());
    // Served by another pod than the pick (an Envoy retry): its times are not the pick's to learn.
    if (o.status != 200 || o.firstMs == 0 || r.pickedAtMs <= 0 || r.servedElsewhere()) return;
    // A stream that ended early (the client left, a reset) after its first token still has its
    // TTFT; its TPOT and a cut non-streaming body are incomplete.
    const whole = o.endMs > 0;
    if (!whole && o.tally.events == 0) return;
    const tokens = <f64>o.tally.tokens();
    let ttftY: f64 = -1;
    let tpotY: f64 = -1;
    if (o.tally.events > 0) {
      ttftY = o.firstMs - r.pickedAtMs;
      if (whole && tokens >= 2) tpotY = (o.endMs - o.firstMs) / (tokens - 1);
    } else if (tokens >= 1) {
      // Non-streaming: one total = TTFT + TPOT x (tokens - 1), as a stream's gaps; each part learns
      // it minus the other's current prediction. One token has no gap: the TTFT alone.
      const total = o.endMs - r.pickedAtMs;
      const gaps = tokens - 1;
      const pt = isNaN(o.predTtft) ? 0.0 : o.predTtft;
      const pp = isNaN(o.predTpot) ? 0.0 : o.predTpot;
      if (gaps >= 1) tpotY = max(0.0, (total - pt) / gaps);
      ttftY = max(0.0, total - pp * gaps);
    }
    if (ttftY >= 0) ttftY = clipObservation(ttftY, o.predTtft);
    if (tpotY >= 0) tpotY = clipObservation(tpotY, o.predTpot);
    const slots = <f64>this.cfg.slo.batchSlots;
    const tx = ttftFeatures(o.uncached, o.inflight, slots, o.prefillAhead);
    const ty = ttftY >= 0 ? baseObservation(tx, ttftY, o.wait, o.baseTtft) : NaN;
    model.observe(o.address, tx, ty, tpotFeatures(o.inflight, slots), tpotY >= 0 ? tpotY : NaN,
      trustObservation(o.said, o.tally.cachedShare()), host.nowMillis());
  }
}

function pickMode(pick: string): i32 {
  if (pick == SLO_PICK_TPOT_FIT) return PICK_TPOT_FIT;
  return pick == SLO_PICK_BEST_FIT ? PICK_BEST_FIT : PICK_MOST_HEADROOM;
}
