// How well could any pick-time TTFT predictor do? (`slo-hetero --ttft-bound`, RESULTS 12.1g.)
//
// A virtual run is replayed, request by request, through a model of the engine's steps that has
// the simulator's exact step cost (base + per prefill token + per decoding sequence, times the
// pod's slow factor; only the +-jitter is unknown) and the simulator's scheduling (a request
// joins the first step that starts once its pod's scheduler sees it; tokens come at a step's end).
// At the instant the request was sent to its pod it knows what a gateway with every stream of
// the fleet would know: each earlier request's send time, uncached prompt, whether its first
// token has come and whether it is still decoding, and the ends of the pod's steps so far (every
// token time seen on the pod). Two things it cannot know at the pick are then given to it, one
// at a time and together:
//   - the pod's API overhead (when its scheduler will see each request; else the profile's mean),
//   - the requests sent to the pod after this one (a later, quicker request may share its step).
// With both, the replay is the engine itself but for the jitter; with neither, it bounds what a
// model of the steps can do with the information a pick has.
// Batch slots are modelled (FCFS admission while the pod runs fewer than its slots; a decoding
// request frees its slot after the tokens it still owes, which a gateway knows from max_tokens
// and the tokens it saw). Simplifications: no token budget or chunked prefill, no preemption.
import { resolveProfile } from "../../host-test/sim/profiles.js";
import type { VirtualOutcome } from "../virtual/virtual-gateway.js";
import { pct } from "./client.js";
import type { SloFleet } from "./virtual-run.js";

/** The TTFT a pick predicted, from its debug header (`:ttft=<ms>`; predicted_latency's and the
 *  oracles'); null when it carries none. */
export function predictedTtft(debug: string): number | null {
  const m = debug.match(/:ttft=([0-9.]+)/);
  return m ? Number(m[1]) : null;
}

export interface StepCost { baseMs: number; msPerPrefillToken: number; msPerDecodeSeq: number }

/** One served request of the run, on its pod's clock (virtual ms). */
export interface ReplayRequest {
  start: number;
  sent: number;
  ready: number;
  uncached: number;
  /** Its token times (the first at [0]; as many as it asked for: the runs ignore EOS). */
  tokens: number[];
}

export interface Knowledge { readyTimes: boolean; laterRequests: boolean }

/** One pod: its requests by send time, its step ends (sorted), its cost and slow factor. */
export interface ReplayPod { requests: ReplayRequest[]; stepEnds: number[]; cost: StepCost; slowFactor: number; slots: number; meanOverheadMs: number }

/** Index of the last value <= x in sorted `a` (-1 when none). */
function lastAtOrBefore(a: number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] <= x) lo = mid + 1; else hi = mid;
  }
  return lo - 1;
}

/** The replay's TTFT of `r` (from its start), with what `know` grants beyond the pick's own view. */
export function replayTtft(pod: ReplayPod, r: ReplayRequest, know: Knowledge): number {
  const t = r.sent;
  const at = lastAtOrBefore(pod.stepEnds, t);
  const lastEnd = at >= 0 ? pod.stepEnds[at] : -Infinity;
  const readyOf = (q: ReplayRequest) => (know.readyTimes ? q.ready : q.sent + pod.meanOverheadMs);
  // Decoding: the tokens each still owes (the gateway knows max_tokens and counts what it saw).
  let running: number[] = [];
  // Waiting, in the order the pod got them (the scheduler's FCFS order; pod.requests is sorted).
  const waiting: Array<{ ready: number; uncached: number; tokens: number; own: boolean }> = [];
  for (const q of pod.requests) {
    if (q !== r && q.sent >= t && !know.laterRequests) continue;
    if (q === r) waiting.push({ ready: readyOf(r), uncached: r.uncached, tokens: r.tokens.length, own: true });
    else if (q.tokens[0] > t) waiting.push({ ready: readyOf(q), uncached: q.uncached, tokens: q.tokens.length, own: false });
    else if (q.tokens[q.tokens.length - 1] > t) running.push(q.tokens.length - (lastAtOrBefore(q.tokens, t) + 1));
  }
  const earliestReady = () => waiting.reduce((m, w) => Math.min(m, w.ready), Infinity);
  // A step is in progress at t when the pod decodes or its scheduler saw a request by the last step's end.
  const busy = running.length > 0 || waiting.some((w) => !w.own && w.ready <= lastEnd);
  let start = busy ? lastEnd : Math.max(lastEnd, earliestReady());
  for (let first = true; ; first = false) {
    // Admission, FCFS among what the scheduler has seen, while batch slots are free (the own
    // request cannot be in the step in progress: it was sent after that step began).
    const joining: typeof waiting = [];
    for (let i = 0; i < waiting.length && running.length + joining.length < pod.slots; ) {
      const w = waiting[i];
      if (w.ready <= start && !(first && busy && w.own)) joining.push(...waiting.splice(i, 1)); else i++;
    }
    const prefill = joining.reduce((a, w) => a + w.uncached, 0);
    let end = start + (pod.cost.baseMs + pod.cost.msPerPrefillToken * prefill + pod.cost.msPerDecodeSeq * running.length) * pod.slowFactor;
    // The step in progress has not ended by t (no token said so): it ends at t at the earliest.
    if (first && busy && end < t) end = t;
    if (joining.some((w) => w.own)) return end - r.start;
    running = running.map((left) => left - 1).filter((left) => left > 0);
    for (const w of joining) if (w.tokens > 1) running.push(w.tokens - 1);
    start = running.length > 0 ? end : Math.max(end, earliestReady());
  }
}

export interface BoundFleet { pods: number; slowPods: readonly number[]; slowFactor: number; slots: number; cost: StepCost; apiOverheadMs: readonly [number, number] }

/** A virtual run's fleet as the replay sees it: the profile's step cost and API overhead range. */
export function boundFleet(fleet: SloFleet): BoundFleet {
  const p = resolveProfile(fleet.profile, fleet.profileOverrides);
  return {
    pods: fleet.pods, slowPods: fleet.slowPods ?? [], slowFactor: fleet.slowFactor ?? 2, slots: p.maxNumSeqs,
    cost: { baseMs: p.stepBaseMs, msPerPrefillToken: p.prefillMsPerToken, msPerDecodeSeq: p.decodeMsPerSeq }, apiOverheadMs: p.apiOverheadMs,
  };
}

/** The run's served requests per pod (pod `pod-<i>`), each pod's step ends from every token time. */
export function replayPods(outcomes: VirtualOutcome[], starts: number[], fleet: BoundFleet): { pods: ReplayPod[]; served: Array<{ pod: number; r: ReplayRequest; o: VirtualOutcome }> } {
  const pods: ReplayPod[] = Array.from({ length: fleet.pods }, (_, i) => ({
    requests: [], stepEnds: [], cost: fleet.cost, slowFactor: fleet.slowPods.includes(i) ? fleet.slowFactor : 1, slots: fleet.slots,
    meanOverheadMs: (fleet.apiOverheadMs[0] + fleet.apiOverheadMs[1]) / 2,
  }));
  const served: Array<{ pod: number; r: ReplayRequest; o: VirtualOutcome }> = [];
  const ends = pods.map(() => new Set<number>());
  outcomes.forEach((o, i) => {
    const m = o.pod ? /^pod-(\d+)$/.exec(o.pod) : null;
    if (!m || o.firstTokenMs === null || o.sentMs === null || o.podReadyMs === null) return;
    const pod = Number(m[1]);
    const r: ReplayRequest = {
      start: starts[i], sent: o.sentMs, ready: o.podReadyMs, uncached: Math.max(0, o.promptTokens - o.cachedTokens),
      tokens: o.tokenMs,
    };
    pods[pod].requests.push(r);
    for (const at of o.tokenMs) ends[pod].add(at);
    served.push({ pod, r, o });
  });
  pods.forEach((p, i) => {
    p.requests.sort((a, b) => a.sent - b.sent);
    p.stepEnds = [...ends[i]].sort((a, b) => a - b);
  });
  return { pods, served };
}

export interface BoundRow { predictor: string; requests: number; p50: number; p90: number }

const VARIANTS: Array<{ predictor: string; know: Knowledge }> = [
  { predictor: "steps replayed, the pick's knowledge", know: { readyTimes: false, laterRequests: false } },
  { predictor: "+ the pods' API overheads", know: { readyTimes: true, laterRequests: false } },
  { predictor: "+ the requests sent after", know: { readyTimes: false, laterRequests: true } },
  { predictor: "+ both (the engine but its jitter)", know: { readyTimes: true, laterRequests: true } },
];

/**
 * TTFT error p50/p90 (|predicted - observed| / observed, observed from the request's start) of
 * the plugin's own predictions (the debug header's `:ttft=`, when `withModel`) and of the replay
 * with each knowledge, over the same requests: every served request, or `only` of them.
 */
export function ttftBoundRows(outcomes: VirtualOutcome[], starts: number[], fleet: BoundFleet, only: (o: VirtualOutcome) => boolean = () => true): BoundRow[] {
  const { pods, served } = replayPods(outcomes, starts, fleet);
  const chosen = served.filter((s) => only(s.o));
  const row = (predictor: string, predict: (s: (typeof served)[number]) => number | null): BoundRow | null => {
    const errs: number[] = [];
    for (const s of chosen) {
      const p = predict(s);
      const observed = s.r.tokens[0] - s.r.start;
      if (p !== null && observed > 0) errs.push(Math.abs(p - observed) / observed);
    }
    return errs.length ? { predictor, requests: errs.length, p50: pct(errs, 0.5), p90: pct(errs, 0.9) } : null;
  };
  const rows = [row("the plugin's model (debug header)", (s) => predictedTtft(s.o.debug))];
  for (const v of VARIANTS) rows.push(row(v.predictor, (s) => replayTtft(pods[s.pod], s.r, v.know)));
  return rows.filter((r): r is BoundRow => r !== null);
}
