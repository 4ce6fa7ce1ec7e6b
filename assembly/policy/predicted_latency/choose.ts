// predicted_latency's choice among candidates from their predictions (pure, no host calls).
// With an SLO (TTFT and/or TPOT, ms): headroom_i = min over the given SLOs of (slo - pred) / slo;
// the hosts with headroom >= 0 can meet it; among them, by `mode`:
//   PICK_TPOT_FIT: best fit on TPOT, the speed of the host: the hosts whose TPOT headroom is within
//     TPOT_BAND of the least (the slowest hosts fast enough), then the lowest TTFT among them
//     (the one whose slot frees first). A loose request goes to a slow host and leaves the fast
//     ones to tight requests; without a TPOT SLO it is most headroom. With `harm` (the streams
//     this request's prefill would make miss their TPOT SLO, per host), the band's least harm first;
//   PICK_BEST_FIT: least headroom (keeps the roomiest hosts for tight requests, llm-d's default);
//   PICK_MOST_HEADROOM: most headroom.
// With probability `explore`, a random one of them. None can: a sheddable request is shed, any
// other goes to the most headroom (the least late). Without an SLO: the lowest ttft + tpot x
// expected output tokens + `recompute` (what prefilling a prefix another host holds would cost
// the streams there: evaluation.ts recomputeCost), or, with probability `explore`, any host (a
// host that looks slow is still observed, so its recovery is learned); with `harm`, the least
// harm among the hosts within LATENCY_BAND of that lowest score first; with `inflight` and
// `uncached`, the fewest in flight among the hosts within LOAD_BAND of the lowest score that hold
// as much of the prompt, the least recently picked among those (`picked`: by any gateway), then
// the lowest score (lowestLatency; reason alike_fewest when that is not the lowest).
// Hosts the load gate excludes (eligible false) are never chosen; predictions NaN (nothing
// learned) make the choice fall back (index NO_MODEL). Near-equal scores break ties at random.

export const PICK_MOST_HEADROOM: i32 = 0;
export const PICK_BEST_FIT: i32 = 1;
export const PICK_TPOT_FIT: i32 = 2;

/** Width of the TPOT-fit band, in headroom (a share of the TPOT SLO): hosts of about one speed. */
export const TPOT_BAND: f64 = 0.1;
/** Without an SLO, the latency a request may give up (a share of the lowest score) to harm fewer streams. */
export const LATENCY_BAND: f64 = 0.1;
/**
 * Without an SLO, hosts whose scores are this close (a share of the lowest) and that hold as much
 * of the prompt are alike to the model, and the request goes to the fewest in flight among them.
 * Alike pods' models differ by a few percent (TPOT x hundreds of output tokens: 0.2 ms is 40 ms),
 * and the lowest score piled requests onto one pod (higress: 8 in flight there, 2 on another);
 * the model does not see a KV cache filling, the count of requests does (bench/RESULTS.md 12.1k).
 */
export const LOAD_BAND: f64 = 0.1;

export const NO_MODEL: i32 = -2;
export const SHED: i32 = -1;

export class Choice {
  /** The pod this choice would have been without the harm (tpot_fit, or no SLO) would have harmed
   *  more streams. */
  avoided: bool = false;
  constructor(public index: i32, public reason: string) {}
}

/** Whether a choice's reason says the host meets the SLO by the mode's rule (not exploring). */
export function isSloFit(reason: string): bool {
  return reason == "slo_tpot_fit" || reason == "slo_best_fit" || reason == "slo_most_headroom" || reason == "slo_wait_slot";
}

/** Random draws for one choice: `explore` in [0, 1), `pick` any u32. */
export class Draws {
  constructor(public explore: f64, public pick: u32) {}
}

function headroom(pred: f64, slo: f64): f64 {
  return (slo - pred) / slo;
}

export function headroomOf(ttft: f64, tpot: f64, sloTtft: f64, sloTpot: f64): f64 {
  let h = Infinity;
  if (sloTtft > 0) h = min(h, headroom(ttft, sloTtft));
  if (sloTpot > 0) h = min(h, headroom(tpot, sloTpot));
  return h;
}

/** Index among `idx` (not empty) of the lowest score (highest when `highest`), random among near
 *  ties; random among all of `idx` when the scores are not comparable (infinite or NaN: never a
 *  remainder by an empty tie list, which traps the VM). */
function extreme(idx: i32[], score: f64[], highest: bool, pick: u32): i32 {
  let best = highest ? -Infinity : Infinity;
  for (let j = 0; j < idx.length; j++) {
    const v = score[idx[j]];
    if (highest ? v > best : v < best) best = v;
  }
  const tol = 1e-6 * max(1.0, abs(best));
  const ties = new Array<i32>(0);
  for (let j = 0; j < idx.length; j++) if (abs(score[idx[j]] - best) <= tol) ties.push(idx[j]);
  if (ties.length == 0) return idx[<i32>(pick % <u32>idx.length)];
  return ties[<i32>(pick % <u32>ties.length)];
}

export function chooseBySlo(ttft: f64[], tpot: f64[], eligible: bool[], sloTtft: f64, sloTpot: f64,
  mode: i32, explore: f64, sheddable: bool, expectedTokens: f64, d: Draws, harm: f64[] | null = null, recompute: f64[] | null = null, inflight: f64[] | null = null, uncached: f64[] | null = null,
  picked: f64[] | null = null): Choice {
  const n = ttft.length;
  const known = new Array<i32>(0);
  for (let i = 0; i < n; i++) if (eligible[i] && !isNaN(ttft[i]) && !isNaN(tpot[i])) known.push(i);
  if (known.length == 0) return new Choice(NO_MODEL, "no_model");
  const hasSlo = sloTtft > 0 || sloTpot > 0;
  if (!hasSlo) {
    if (explore > 0 && d.explore < explore) return new Choice(known[<i32>(d.pick % <u32>known.length)], "explore");
    const score = new Array<f64>(n).fill(Infinity);
    for (let j = 0; j < known.length; j++) { const i = known[j]; score[i] = ttft[i] + tpot[i] * expectedTokens + (recompute !== null ? recompute[i] : 0.0); }
    if (harm === null) return lowestLatency(known, score, inflight, uncached, picked, d.pick);
    const c = lowestLatency(leastHarm(nearLeast(known, score, LATENCY_BAND), harm), score, inflight, uncached, picked, d.pick);
    c.avoided = harm[lowestLatency(known, score, inflight, uncached, picked, d.pick).index] > harm[c.index];
    return c;
  }
  const h = new Array<f64>(n).fill(-Infinity);
  const ok = new Array<i32>(0);
  for (let j = 0; j < known.length; j++) {
    const i = known[j];
    h[i] = headroomOf(ttft[i], tpot[i], sloTtft, sloTpot);
    if (h[i] >= 0) ok.push(i);
  }
  if (ok.length == 0) {
    if (sheddable) return new Choice(SHED, "slo_unmet_shed");
    return new Choice(extreme(known, h, true, d.pick), "slo_unmet");
  }
  if (explore > 0 && d.explore < explore) return new Choice(ok[<i32>(d.pick % <u32>ok.length)], "slo_explore");
  if (mode == PICK_TPOT_FIT && sloTpot > 0) {
    // Within the band the hosts are about as fast: the ones where this request's prefill harms the
    // fewest other streams, then the one whose slot frees first (least TTFT).
    const band = tpotBand(ok, tpot, sloTpot);
    const c = new Choice(bandPick(harm !== null ? leastHarm(band, harm) : band, ttft, h, sloTtft > 0, d.pick), "slo_tpot_fit");
    if (harm !== null) c.avoided = harm[bandPick(band, ttft, h, sloTtft > 0, d.pick)] > harm[c.index];
    return c;
  }
  const bestFit = mode == PICK_BEST_FIT;
  return new Choice(extreme(ok, h, !bestFit, d.pick), bestFit ? "slo_best_fit" : "slo_most_headroom");
}

/**
 * Without an SLO: the lowest score (reason lowest_latency), unless a host within LOAD_BAND of it
 * (a share of it) that holds at least as much of the prompt (uncached tokens no more than the
 * lowest's) has fewer requests in flight, or as few and was picked less recently; then the fewest
 * in flight among those, the least recently picked among ties (`picked`), then the lowest score
 * (reason alike_fewest). Without `inflight` or `uncached`: the lowest score.
 */
function lowestLatency(idx: i32[], score: f64[], inflight: f64[] | null, uncached: f64[] | null, picked: f64[] | null, pick: u32): Choice {
  const best = extreme(idx, score, false, pick);
  if (inflight === null || uncached === null) return new Choice(best, "lowest_latency");
  const limit = score[best] + LOAD_BAND * abs(score[best]);
  const alike = new Array<i32>(0);
  for (let j = 0; j < idx.length; j++) {
    const i = idx[j];
    if (score[i] <= limit && uncached[i] <= uncached[best]) alike.push(i);
  }
  if (alike.length == 0) alike.push(best);
  const chosen = extreme(leastRecent(nearLeast(alike, inflight, 0), picked), score, false, pick);
  return new Choice(chosen, chosen == best ? "lowest_latency" : "alike_fewest");
}

/** tpot_fit within `band`: the least TTFT (with a TTFT SLO), else the most headroom. */
function bandPick(band: i32[], ttft: f64[], h: f64[], byTtft: bool, pick: u32): i32 {
  return byTtft ? extreme(band, ttft, false, pick) : extreme(band, h, true, pick);
}

/** The hosts of `idx` whose `value` is within `share` of the least (0: the least); all of `idx`
 *  when none compares (values infinite or NaN). */
function nearLeast(idx: i32[], value: f64[], share: f64): i32[] {
  let least = Infinity;
  for (let j = 0; j < idx.length; j++) least = min(least, value[idx[j]]);
  const limit = share > 0 ? least + share * abs(least) : least;
  const out = new Array<i32>(0);
  for (let j = 0; j < idx.length; j++) if (value[idx[j]] <= limit) out.push(idx[j]);
  return out.length > 0 ? out : idx;
}

/**
 * The hosts of `idx` picked least recently (the lowest stamp in `picked`, by any gateway); all of
 * `idx` without stamps. The model scores alike pods a few percent apart at random, and the lowest
 * score sent two requests in a row to one pod while another had been idle longer; their prefills
 * then queued on one engine (photoroom: TTFT p99 163 ms, against 94 for global_least_request,
 * whose ties go the same way: lua/lib.lua least_recent; bench/RESULTS.md 3c).
 */
export function leastRecent(idx: i32[], picked: f64[] | null): i32[] {
  return picked === null ? idx : nearLeast(idx, picked, 0);
}

/** The hosts of `idx` whose harm (other streams this request's prefill would make miss their
 *  TPOT SLO) is the least. */
function leastHarm(idx: i32[], harm: f64[]): i32[] {
  return nearLeast(idx, harm, 0);
}

/** The hosts of `idx` whose TPOT headroom is within TPOT_BAND of the least (the slowest that fit);
 *  all of `idx` when none compares. */
function tpotBand(idx: i32[], tpot: f64[], sloTpot: f64): i32[] {
  let least = Infinity;
  for (let j = 0; j < idx.length; j++) least = min(least, headroom(tpot[idx[j]], sloTpot));
  const band = new Array<i32>(0);
  for (let j = 0; j < idx.length; j++) if (headroom(tpot[idx[j]], sloTpot) <= least + TPOT_BAND) band.push(idx[j]);
  return band.length > 0 ? band : idx;
}
