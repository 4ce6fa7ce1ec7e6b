// One evaluation of a request's candidates by predicted_latency (the predictions per candidate and
// the choice), and the late-binding rules that may change the choice when no pod meets the SLO
// counting the wait for a batch slot: wait for a pod that meets it once its slot frees
// (waitForSlot), else go late, only to a free slot, one left free for a while (lateToFreeSlot).
// Pure: no host calls.
import { Choice, chooseBySlo, Draws, leastRecent, NO_MODEL } from "./choose";
import { HostModel } from "./model";

/**
 * What a request brings to every evaluation of it, fixed at its first: its SLOs (ms, 0: none),
 * prompt tokens (chars / 4; 0 when the body is unknown), expected output tokens (max_tokens, else
 * the route's expectedOutputTokens) and its random draws. A held request keeps these, not its body.
 * `streaming`: it asked for a streamed response (its first chunk is its first token).
 */
export class RequestTerms {
  streaming: bool = false;
  constructor(public sloTtft: f64, public sloTpot: f64, public promptTokens: f64, public expected: f64, public draws: Draws) {}
}

/** One evaluation of the candidates for a request: the predictions and the choice. */
export class Evaluation {
  ttft: f64[];
  decideTtft: f64[];
  tpot: f64[];
  inflight: f64[];
  uncached: f64[];
  /** The share of the prompt the prefix tree says each candidate holds (before the trust in it, cache_trust.ts). */
  said: f64[];
  base: f64[];
  wait: f64[];
  prefill: f64[];
  /** Other streams this request's prefill would make miss their TPOT SLO (sloInterference). */
  harm: f64[] | null = null;
  /** Without an SLO: what recomputing a prefix another candidate holds would cost the streams
   *  there, in ms summed over them (recomputeCost); null with an SLO. */
  recompute: f64[] | null = null;
  eligible: bool[];
  /** When each candidate was last picked by any gateway (PickReads.stamps); null: unknown. */
  picked: f64[] | null = null;
  choice: Choice = new Choice(NO_MODEL, "");
  at: i32 = 0;
  /** No pod meets the SLO (the choice was the least late). */
  unmet: bool = false;
  /** Late binding: no pod meets the SLO and none has a free slot (held). */
  late: bool = false;
  /** The request's TTFT SLO (ms; 0: none), and what is left of it at this evaluation. */
  sloTtft: f64 = 0;
  ttftLeft: f64 = 0;
  constructor(n: i32, public expected: f64) {
    this.ttft = new Array<f64>(n);
    this.decideTtft = new Array<f64>(n);
    this.tpot = new Array<f64>(n);
    this.inflight = new Array<f64>(n);
    this.uncached = new Array<f64>(n);
    this.said = new Array<f64>(n);
    this.base = new Array<f64>(n);
    this.wait = new Array<f64>(n);
    this.prefill = new Array<f64>(n);
    this.eligible = new Array<bool>(n);
  }
}

/**
 * A request without an SLO goes where its own latency is least, but a pod that lacks a prefix
 * another candidate holds must prefill it again, and that prefill stalls every stream running
 * there (an engine runs it in the same step as their decode). Per candidate: the TTFT model's
 * price of its uncached tokens beyond the fewest of any eligible candidate, times the streams in
 * flight there (at most `slots` when known: queued ones start after it). 0 where the request is
 * cached best, and everywhere when no candidate holds more of it than another, so the choice is
 * unchanged for prompts no pod has seen. Fills e.recompute.
 */
export function recomputeCost(e: Evaluation, models: HostModel[], slots: f64): void {
  const n = e.uncached.length;
  let fewest = Infinity;
  for (let i = 0; i < n; i++) if (e.eligible[i]) fewest = min(fewest, e.uncached[i]);
  const cost = new Array<f64>(n).fill(0.0);
  for (let i = 0; i < n; i++) {
    if (!(e.uncached[i] > fewest)) continue;
    const q = e.inflight[i];
    const extra = e.base[i] - models[i].predictTtft(fewest, q, slots, 0, e.prefill[i]);
    cost[i] = max(0.0, extra) * (slots > 0 ? min(q, slots) : q);
  }
  e.recompute = cost;
}

/**
 * Late binding, no pod meets the SLO once the wait for a slot is counted: the request still can if
 * a pod that meets it without the wait (base TTFT within `ttftLeft`, TPOT within `sloTpot`) frees a
 * slot in time, and held it takes that slot the moment it frees. Then e waits for the one of those
 * with the least TTFT as the choice compares it (reason slo_wait_slot); false: there is none.
 */
export function waitForSlot(e: Evaluation, ttftLeft: f64, sloTpot: f64): bool {
  let best = -1;
  for (let i = 0; i < e.eligible.length; i++) {
    if (!e.eligible[i] || !(e.base[i] <= ttftLeft) || (sloTpot > 0 && !(e.tpot[i] <= sloTpot))) continue;
    if (best < 0 || e.decideTtft[i] < e.decideTtft[best]) best = i;
  }
  if (best < 0) return false;
  e.at = best;
  e.choice = new Choice(best, "slo_wait_slot");
  e.unmet = false;
  return true;
}

/**
 * Late binding, prefill interference: the chosen pod's open streams would miss their TPOT SLO for
 * this request's prefill (e.harm), and its predicted TTFT (as the choice compares it) still leaves
 * more than `share` of its TTFT SLO: it may wait for those streams to get ahead or end.
 */
export function holdsForHarm(e: Evaluation, share: f64): bool {
  if (!(share > 0) || e.harm === null || !(e.sloTtft > 0) || e.at < 0 || e.at >= e.harm!.length) return false;
  return e.harm![e.at] > 0 && e.ttftLeft - e.decideTtft[e.at] > share * e.sloTtft;
}

/** A late request leaves this many batch slots of a pod free, for on-time requests arriving next... */
export const LATE_RESERVE_SLOTS: f64 = 1;
/** ...until it is this late (ms past its TTFT deadline; without a TTFT SLO, held this long). As the
 *  late-binding oracle (bench/slo/slo-late-picker.ts), where it was chosen; RESULTS 12.1. */
export const LATE_PATIENCE_MS: f64 = 2000;

/** The slots a late request leaves free, `lateByMs` past its deadline. */
export function lateReserve(lateByMs: f64): f64 {
  return lateByMs < LATE_PATIENCE_MS ? LATE_RESERVE_SLOTS : 0.0;
}

/**
 * Late binding, a request no pod can serve in time: it goes only to a pod with room for it and
 * `reserve` more (fewer than `slots` - `reserve` in flight; the least late of those, reason
 * slo_unmet_free_slot), so it never queues in front of requests still on time nor takes the last
 * slot one of them arriving next would need; with none it is held (e.late).
 */
export function lateToFreeSlot(e: Evaluation, slots: f64, ttftLeft: f64, sloTpot: f64, mode: i32, draws: Draws, reserve: f64): void {
  const free = new Array<bool>(e.eligible.length);
  let any = false;
  for (let i = 0; i < free.length; i++) { free[i] = e.eligible[i] && e.inflight[i] < slots - reserve; if (free[i]) any = true; }
  e.late = true;
  if (!any) return;
  const c = chooseBySlo(e.decideTtft, e.tpot, free, ttftLeft, sloTpot, mode, 0, false, e.expected, draws, e.harm);
  if (c.index < 0) return;
  e.at = c.index;
  e.choice = new Choice(c.index, "slo_unmet_free_slot");
  e.late = false;
}

/** Fewest in flight among the eligible hosts (nothing learned yet), the least recently picked
 *  among ties (`picked`: leastRecent), then random. */
export function fewestInflight(inflight: f64[], eligible: bool[], pick: u32, picked: f64[] | null = null): i32 {
  let best = Infinity;
  for (let i = 0; i < inflight.length; i++) if (eligible[i] && inflight[i] < best) best = inflight[i];
  const tied = new Array<i32>(0);
  for (let i = 0; i < inflight.length; i++) if (eligible[i] && inflight[i] == best) tied.push(i);
  if (tied.length == 0) return 0;
  const ties = leastRecent(tied, picked);
  return ties[<i32>(pick % <u32>ties.length)];
}
