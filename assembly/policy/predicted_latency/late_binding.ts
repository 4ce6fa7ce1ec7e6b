// predicted_latency's late binding (`sloHoldMs` > 0, with `modelBatchSlots`): the requests one VM
// holds at the gateway instead of in a full pod's FCFS queue, and the passes that send them. A
// pass (a stream of this VM ended, a tick, a refused lease) walks the held requests in deadline
// order: a request with no candidate free (by the newest counts and the plan) stays as it is; the
// others are evaluated again and sent once the pod chosen for them has a free slot; the ones no pod
// can serve in time any more (late) go in a second pass, after the on-time ones. The plan: each
// request kept held counts on the host it waits for, so the next ones are predicted behind it.
// The predictions, the choice and the lease are the policy's (HeldJudge).
// Failure behaviour: a client gone while held is dropped (nothing leased); after sloHoldMs a
// request goes whatever happens; retired (a new configuration), held requests go on to the
// route's own load balancing.
import { Verdict } from "../../services/request/verdict";
import { LbRequest } from "../../services/request/request";
import { Services } from "../../services/services";
import { CandidateSet } from "../../services/candidates/candidates";
import { SloSettings } from "../../config/slo_settings";
import * as host from "../../host/calls";
import { isSloFit } from "./choose";
import { Evaluation, holdsForHarm, RequestTerms } from "./evaluation";
import { countHost, HeldRequest, HoldList } from "./hold";
import { HostQueue, PassFree } from "./pass_free";
import { PickReads } from "./pick_reads";
import { SiblingHolds } from "./sibling_streams";

/** What late binding asks of the policy for a held request. */
export abstract class HeldJudge {
  /** Predictions and choice for `h`, held `heldMs`, behind the plan `ahead` (null: shed, the stream told). */
  abstract evaluate(h: HeldRequest, heldMs: f64, ahead: Map<string, f64>): Evaluation | null;
  /** Sends `h` where `e` chose. */
  abstract commit(h: HeldRequest, e: Evaluation, heldMs: f64): Verdict;
  /** Whether a candidate of `h` has a free slot by its own read of the counts: 1 yes, 0 no, -1 its
   *  read is older than the tracker's (the pass's free-host lists decide). */
  abstract freeByOwnRead(h: HeldRequest, ahead: Map<string, f64>): i32;
  /** The sibling VMs' held requests on time, by deadline (null: none, or not shared). */
  abstract siblingHolds(): SiblingHolds | null;
}

export class LateBinding {
  /** During a pass: each candidate set's hosts with a free slot. */
  private readonly passFree: PassFree;
  /** A new configuration replaced this one (retire): nothing is held any more. */
  private retired: bool = false;

  /** `held`: the list of held requests (the policy's, which its sibling records publish). */
  constructor(private readonly cfg: SloSettings, private readonly services: Services, tracker: HostQueue,
    private readonly judge: HeldJudge, readonly held: HoldList) {
    this.passFree = new PassFree(tracker, <f64>cfg.batchSlots);
  }

  /** Whether late binding is configured. */
  get on(): bool { return this.cfg.holdMs > 0 && this.cfg.batchSlots > 0; }

  /** Whether a request held `heldMs` so far may be held on (late binding on, sloHoldMs not up). */
  canHold(heldMs: f64): bool { return this.on && heldMs < <f64>this.cfg.holdMs; }

  /** Held requests on time due no later than `deadlineMs` (this VM's, and its siblings' due
   *  earlier), by the host they wait for (null: none held). */
  aheadOf(deadlineMs: f64): Map<string, f64> | null {
    let out: Map<string, f64> | null = this.held.length > 0 ? this.held.aheadOf(deadlineMs) : null;
    const sib = this.judge.siblingHolds();
    if (sib === null) return out;
    for (let j = 0; j < sib.length && sib.deadlines[j] < deadlineMs; j++) {
      if (out === null) out = new Map<string, f64>();
      countHost(out, sib.hosts[j]);
    }
    return out;
  }

  /**
   * Hold the request while the pod chosen for it has no free batch slot (every slot taken by the
   * fleet's requests in flight there), or its prefill would make streams there miss their TPOT SLO
   * while it can still wait (holdsForHarm, sloInterferenceHold), the choice met its SLO, and it has
   * been held less than sloHoldMs. A request no pod can serve in time any more is held only while
   * no pod has a free slot (lateToFreeSlot).
   */
  mayHold(e: Evaluation, heldMs: f64): bool {
    if (!this.canHold(heldMs)) return false;
    if (e.late) return true;
    if (!isSloFit(e.choice.reason)) return false;
    return this.podFull(e) || holdsForHarm(e, this.cfg.interferenceHold);
  }

  /** Whether the pod chosen in `e` has no free batch slot by the fleet's requests in flight there. */
  private podFull(e: Evaluation): bool {
    return e.inflight[e.at] >= <f64>this.cfg.batchSlots;
  }

  /** A new request, waiting at the gateway since `sinceMs` (its wait in the queue, if any, counts
   *  as held): held when its evaluation calls for it and fewer than sloHoldMax are held (beyond,
   *  it goes as without late binding). False: send it now. */
  tryHold(r: LbRequest, c: CandidateSet, reads: PickReads, sinceMs: f64, terms: RequestTerms, e: Evaluation): bool {
    if (<i64>this.held.length >= this.cfg.holdMax || !this.mayHold(e, host.nowMillis() - sinceMs)) return false;
    const h = new HeldRequest(r, c, reads, sinceMs, terms);
    h.late = e.late;
    // Held on time with a free slot there: mayHold held it for the streams its prefill would harm.
    if (!e.late && !this.podFull(e)) this.services.stats.sloInterferenceHeld();
    this.add(h, c.hosts[e.at]);
    return true;
  }

  /**
   * A request whose lease on a free slot was refused (another VM took the slot): held again, as
   * it was, until the next pass (tick or stream end). Not a pass at once: the counts that showed
   * the slot free may be stale for other hosts too (a pool of more than 64 candidates is counted
   * by the tracker's read alone), and each attempt would cost a lease call; by the next tick or
   * the one after, the tracker has read the counts again. False when retired: send it on.
   */
  holdAgain(h: HeldRequest): bool {
    if (this.retired) return false;
    this.add(h, h.host);
    return true;
  }

  private add(h: HeldRequest, waitsFor: string): void {
    // What its evaluations need is in its terms and reads: the body (up to maxBodyBytes) goes.
    h.r.body = null;
    h.host = waitsFor;
    this.held.add(h);
    this.services.heldStreams++;
    this.services.stats.sloHeld();
  }

  /**
   * A pass: re-evaluates the held requests in deadline order, each goes once its pod has a free
   * slot. The ones still on time go first; then the late ones take what slots are left.
   */
  release(now: f64): void {
    // The sibling VMs' held requests on time: each counts in the plan before this VM's due later
    // (one deadline order across the workers of an Envoy, as one VM's own).
    const sib = this.judge.siblingHolds();
    const nSib = sib !== null ? sib.length : 0;
    for (let pass = 0; pass < 2; pass++) {
      // The held requests kept so far in this pass, by the host they wait for (the plan).
      const ahead = new Map<string, f64>();
      this.passFree.clear();
      let j = 0;
      let i = 0;
      while (i < this.held.length) {
        const h = this.held.entries[i];
        // Pass 1 (the late ones): every sibling's request on time is ahead.
        const before = pass == 1 ? Infinity : h.deadlineMs;
        for (; j < nSib && sib!.deadlines[j] < before; j++) this.planSibling(sib!, j, ahead);
        if (pass == 1 && !h.late) { i++; continue; }
        if (!h.r.port.enterAsync()) { this.drop(i); continue; } // the client left
        const heldMs = now - h.sinceMs;
        if (heldMs < <f64>this.cfg.holdMs && !this.anyFreeSlot(h, ahead)) {
          this.plan(h, ahead);
          i++;
          continue;
        }
        const e = this.judge.evaluate(h, heldMs, ahead);
        if (e !== null && pass == 0 && e.unmet) { h.late = true; i++; continue; } // after the on-time ones
        if (e !== null && this.mayHold(e, heldMs)) {
          h.late = e.late;
          this.held.waitFor(h, h.c.hosts[e.at]);
          this.plan(h, ahead);
          i++;
          continue;
        }
        this.drop(i);
        h.r.port.finishAsync(e === null ? Verdict.Rejected : this.judge.commit(h, e, heldMs));
        if (e !== null) this.passFree.taken(h.r.pool, h.c.hosts[e.at], ahead);
      }
    }
  }

  /**
   * Whether any candidate of a held request has a free slot (by the newest counts and the plan).
   * Without one it stays held as it is, unevaluated: it could go nowhere. A request judged by the
   * tracker's counts (all but those picked since its last read) is checked against the pass's
   * list of its candidate set's free hosts, so a pass over a long list (an overload) costs about
   * one lookup per held request, not a prediction, nor a lookup per candidate.
   */
  private anyFreeSlot(h: HeldRequest, ahead: Map<string, f64>): bool {
    const own = this.judge.freeByOwnRead(h, ahead);
    return own < 0 ? this.passFree.any(h.r.pool, h.c, ahead) : own > 0;
  }

  /** A sibling's held request on time counts in the pass's plan for the host it waits for. */
  private planSibling(sib: SiblingHolds, j: i32, ahead: Map<string, f64>): void {
    countHost(ahead, sib.hosts[j]);
    this.passFree.taken(sib.pools[j], sib.hosts[j], ahead);
  }

  /** A held request stays held: on time, it counts in the pass's plan for the host it waits for. */
  private plan(h: HeldRequest, ahead: Map<string, f64>): void {
    if (h.late) return;
    countHost(ahead, h.host);
    this.passFree.taken(h.r.pool, h.host, ahead);
  }

  private drop(i: i32): void {
    const h = this.held.removeAt(i);
    this.services.heldStreams--;
    this.services.stats.sloHoldEnded(host.nowMillis() - h.sinceMs);
  }

  /** The stream ended while held (the client left): dropped, it was never sent. */
  forget(r: LbRequest): void {
    const at = this.held.indexOf(r);
    if (at >= 0) this.drop(at);
  }

  /** Replaced by a new configuration: the requests held go on at once, to the route's own balancing. */
  retire(): void {
    this.retired = true;
    while (this.held.length > 0) {
      const h = this.held.entries[0];
      this.drop(0);
      h.r.port.resumePass();
    }
  }
}
