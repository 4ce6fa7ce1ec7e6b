// predicted_latency without an SLO: the cost of recomputing a prefix another candidate holds
// (evaluation.ts recomputeCost) and what it does to the choice (choose.ts, no-SLO score).
import { chooseBySlo, Draws, PICK_TPOT_FIT } from "../policy/predicted_latency/choose";
import { Evaluation, recomputeCost } from "../policy/predicted_latency/evaluation";
import { HostModel } from "../policy/predicted_latency/model";

const NO_EXPLORE = new Draws(0.99, 0);
// TTFT = 20 ms + 40 ms per 1,000 uncached tokens + 1 ms per request in flight; TPOT = 10 + 0.1 q.
const MODEL = new HostModel([20, 40, 1, 0], [10, 0.1]);

/** Three candidates with these uncached tokens and requests in flight, all eligible. */
function evaluated(uncached: f64[], inflight: f64[], slots: f64): Evaluation {
  const e = new Evaluation(3, 100);
  for (let i = 0; i < 3; i++) {
    e.uncached[i] = uncached[i];
    e.inflight[i] = inflight[i];
    e.prefill[i] = 0;
    e.base[i] = MODEL.predictTtft(uncached[i], inflight[i], slots, 0, 0);
    e.ttft[i] = e.base[i];
    e.tpot[i] = MODEL.predictTpot(inflight[i], slots);
    e.eligible[i] = true;
  }
  return e;
}

function recomputed(e: Evaluation, slots: f64): f64[] {
  recomputeCost(e, [MODEL, MODEL, MODEL], slots);
  return e.recompute!;
}

describe("recomputeCost", () => {
  it("prices the prefill beyond the best-cached candidate, times the streams it stalls", () => {
    // 1,000 tokens more than candidate 0: 40 ms, stalling 6 streams; 500 more: 20 ms x 2.
    const cost = recomputed(evaluated([0, 1000, 500], [3, 6, 2], 0), 0);
    expect(cost[0]).toBe(0);
    expect(cost[1]).toBeCloseTo(240);
    expect(cost[2]).toBeCloseTo(40);
  });
  it("counts at most the batch slots as stalled (queued requests start after the prefill)", () => {
    expect(recomputed(evaluated([0, 1000, 1000], [3, 10, 2], 4), 4)[1]).toBeCloseTo(160);
  });
  it("is 0 everywhere when no candidate holds more of the prompt than another", () => {
    const cost = recomputed(evaluated([1500, 1500, 1500], [0, 8, 3], 0), 0);
    for (let i = 0; i < 3; i++) expect(cost[i]).toBe(0);
  });
  it("measures from the best-cached eligible candidate only", () => {
    const e = evaluated([0, 1000, 1000], [3, 5, 5], 0);
    e.eligible[0] = false;
    const cost = recomputed(e, 0);
    expect(cost[1]).toBe(0);
    expect(cost[2]).toBe(0);
  });
});

describe("chooseBySlo without an SLO, with the recompute cost", () => {
  it("keeps a request on the pod that holds its prefix while the others' own latency is barely lower", () => {
    // Pod 0 holds the 1,000-token prefix but runs 6 streams; pods 1 and 2 run 1. Alone, the
    // request's own latency (TTFT + 100 x TPOT) is 15 ms lower on pod 1 or 2 (the prefill costs it
    // 40 ms, pod 0's 5 more streams 55 ms); with what its prefill costs their stream, it stays.
    const e = evaluated([0, 1000, 1000], [6, 1, 1], 0);
    expect(chooseBySlo(e.ttft, e.tpot, e.eligible, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE).index).not.toBe(0);
    const cost = recomputed(e, 0);
    expect(cost[1]).toBeCloseTo(40);
    const c = chooseBySlo(e.ttft, e.tpot, e.eligible, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, null, cost);
    expect(c.index).toBe(0);
  });
  it("still leaves a pod whose load costs more than the recomputation", () => {
    // Pod 0 holds the prefix but runs 30 streams: 30 ms more TTFT and 2.9 ms x 100 more decode.
    const e = evaluated([0, 1000, 1000], [30, 1, 1], 0);
    const cost = recomputed(e, 0);
    expect(chooseBySlo(e.ttft, e.tpot, e.eligible, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, null, cost).index).not.toBe(0);
  });
});
