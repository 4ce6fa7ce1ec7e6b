// predicted_latency's late-binding rules on one evaluation (policy/predicted_latency/evaluation.ts):
// wait for a pod that meets the SLO once its slot frees (waitForSlot), else go late, only to a
// free slot, one left free for a while (lateToFreeSlot, lateReserve); fewest in flight before
// anything is learned; hold a prefill that would harm streams while the TTFT SLO leaves room
// (holdsForHarm).
import { Evaluation, fewestInflight, holdsForHarm, LATE_PATIENCE_MS, lateReserve, lateToFreeSlot, waitForSlot } from "../policy/predicted_latency/evaluation";
import { Draws, PICK_TPOT_FIT } from "../policy/predicted_latency/choose";

const NO_EXPLORE = new Draws(0.99, 0);

/** Two pods: 0 fast and full (base 20 ms, a 2 s wait), 1 slow with a free slot (base 300 ms). */
function fastFullSlowFree(): Evaluation {
  const e = new Evaluation(2, 16);
  e.base = [20, 300];
  e.wait = [2000, 0];
  e.ttft = [2020, 300];
  e.decideTtft = [6020, 300];
  e.tpot = [10, 20];
  e.inflight = [4, 1];
  e.eligible = [true, true];
  return e;
}

describe("waitForSlot", () => {
  it("waits for the pod that meets the SLO once its slot frees", () => {
    const e = fastFullSlowFree();
    expect(waitForSlot(e, 150, 30)).toBe(true);
    expect(e.at).toBe(0);
    expect(e.choice.reason).toBe("slo_wait_slot");
    expect(e.unmet).toBe(false);
  });
  it("among several, the one with the least TTFT as the choice compares it", () => {
    const e = fastFullSlowFree();
    e.base = [20, 30];
    e.decideTtft = [6020, 900];
    expect(waitForSlot(e, 150, 30)).toBe(true);
    expect(e.at).toBe(1);
  });
  it("none when no pod meets the SLO even with a free slot now (TTFT or TPOT), or it is not eligible", () => {
    expect(waitForSlot(fastFullSlowFree(), 10, 30)).toBe(false);
    expect(waitForSlot(fastFullSlowFree(), 150, 5)).toBe(false);
    const e = fastFullSlowFree();
    e.eligible = [false, true];
    expect(waitForSlot(e, 150, 30)).toBe(false);
    expect(e.choice.reason).toBe("");
  });
  it("without a TPOT SLO only the TTFT counts", () => {
    expect(waitForSlot(fastFullSlowFree(), 150, 0)).toBe(true);
  });
});

describe("lateToFreeSlot", () => {
  it("a late request goes to a pod with a free slot", () => {
    const e = fastFullSlowFree();
    lateToFreeSlot(e, 4, 10, 30, PICK_TPOT_FIT, NO_EXPLORE, 0);
    expect(e.at).toBe(1);
    expect(e.choice.reason).toBe("slo_unmet_free_slot");
    expect(e.late).toBe(false);
  });
  it("with no free slot it stays late (held)", () => {
    const e = fastFullSlowFree();
    e.inflight = [4, 4];
    lateToFreeSlot(e, 4, 10, 30, PICK_TPOT_FIT, NO_EXPLORE, 0);
    expect(e.late).toBe(true);
    expect(e.at).toBe(0);
  });
});

describe("lateToFreeSlot with a reserve", () => {
  it("leaves the last free slot of a pod to on-time requests: the late one waits for a pod with two", () => {
    const e = fastFullSlowFree();
    e.inflight = [4, 3];
    lateToFreeSlot(e, 4, 10, 30, PICK_TPOT_FIT, NO_EXPLORE, 1);
    expect(e.late).toBe(true);
    e.inflight = [4, 2];
    lateToFreeSlot(e, 4, 10, 30, PICK_TPOT_FIT, NO_EXPLORE, 1);
    expect(e.late).toBe(false);
    expect(e.at).toBe(1);
  });
  it("holds the slot back until the request is LATE_PATIENCE_MS past its deadline", () => {
    expect(lateReserve(0)).toBe(1);
    expect(lateReserve(LATE_PATIENCE_MS - 1)).toBe(1);
    expect(lateReserve(LATE_PATIENCE_MS)).toBe(0);
  });
});

describe("fewestInflight", () => {
  it("the eligible host with the fewest in flight, a tie broken by the draw", () => {
    expect(fewestInflight([3, 1, 1, 0], [true, true, true, false], 0)).toBe(1);
    expect(fewestInflight([3, 1, 1, 0], [true, true, true, false], 1)).toBe(2);
    expect(fewestInflight([3, 1], [false, false], 0)).toBe(0);
    // Among the fewest, the least recently picked (any draw); a host not eligible is never taken.
    expect(fewestInflight([3, 1, 1, 0], [true, true, true, false], 0, [1, 20, 10, 0])).toBe(2);
    expect(fewestInflight([3, 1, 1, 0], [true, true, true, false], 1, [1, 20, 10, 0])).toBe(2);
    expect(fewestInflight([3, 1, 1, 0], [true, true, true, false], 1, [1, 10, 10, 0])).toBe(2);
  });
});

/** Pod 1 chosen: TTFT 100 ms as the choice compares it, its prefill harms `harm` streams there;
 *  TTFT SLO 600 with `left` of it left. */
function harming(harm: f64, left: f64): Evaluation {
  const e = fastFullSlowFree();
  e.at = 1;
  e.decideTtft = [6020, 100];
  e.harm = [0, harm];
  e.sloTtft = 600;
  e.ttftLeft = left;
  return e;
}

describe("holdsForHarm", () => {
  it("holds while the harm is there and more than the share of the TTFT SLO is left after the TTFT", () => {
    // 600 - 100 = 500 left over, a third of 600 is 200: held.
    expect(holdsForHarm(harming(1, 600), 0.33)).toBe(true);
    // Held 290 ms: 210 left over, still more than 198.
    expect(holdsForHarm(harming(1, 310), 0.33)).toBe(true);
    // Held 310 ms: 190 left over, less: it goes.
    expect(holdsForHarm(harming(1, 290), 0.33)).toBe(false);
  });
  it("never without harm there, without harm counted, without a TTFT SLO, or with the share 0", () => {
    expect(holdsForHarm(harming(0, 600), 0.33)).toBe(false);
    const none = harming(1, 600);
    none.harm = null;
    expect(holdsForHarm(none, 0.33)).toBe(false);
    const noSlo = harming(1, 600);
    noSlo.sloTtft = 0;
    noSlo.ttftLeft = 0;
    expect(holdsForHarm(noSlo, 0.33)).toBe(false);
    expect(holdsForHarm(harming(1, 600), 0)).toBe(false);
  });
});
