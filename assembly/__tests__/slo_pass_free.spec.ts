// Late binding's per-pass free-host lists (policy/predicted_latency/pass_free.ts): made once per
// candidate set from the counts plus the plan, and a host leaves its list once a request planned
// on or sent to it fills it.
import { HostQueue, PassFree } from "../policy/predicted_latency/pass_free";
import { CandidateSet } from "../services/candidates/candidates";
import { Pool } from "../services/lease/pool";

/** In flight per host (a test's counts), plus the plan. */
class Counts extends HostQueue {
  inflight: Map<string, f64> = new Map();
  asked: i32 = 0;
  at(_pool: Pool | null, address: string, ahead: Map<string, f64> | null): f64 {
    this.asked++;
    return (this.inflight.has(address) ? this.inflight.get(address) : 0.0) + (ahead !== null && ahead.has(address) ? ahead.get(address) : 0.0);
  }
}

describe("PassFree", () => {
  it("a candidate set has a free host while any host is below its slots, counting the plan", () => {
    const counts = new Counts();
    counts.inflight.set("a", 2);
    counts.inflight.set("b", 1);
    const free = new PassFree(counts, 2);
    const c = new CandidateSet(["a", "b"], "fp");
    const ahead = new Map<string, f64>();
    expect(free.any(null, c, ahead)).toBe(true);
    // b planned (a held request kept for it): full now, and it leaves the list.
    ahead.set("b", 1);
    free.taken(null, "b", ahead);
    expect(free.any(null, c, ahead)).toBe(false);
  });
  it("a list is made once per pass and candidate set: later checks cost no count", () => {
    const counts = new Counts();
    const free = new PassFree(counts, 1);
    const c = new CandidateSet(["a", "b", "c"], "fp");
    const ahead = new Map<string, f64>();
    free.any(null, c, ahead);
    const asked = counts.asked;
    for (let i = 0; i < 10; i++) free.any(null, c, ahead);
    expect(counts.asked).toBe(asked);
    // A new pass makes it again, from the counts as they are then.
    counts.inflight.set("a", 1);
    counts.inflight.set("b", 1);
    counts.inflight.set("c", 1);
    free.clear();
    expect(free.any(null, c, ahead)).toBe(false);
  });
  it("a host that still has room after a request stays listed", () => {
    const counts = new Counts();
    const free = new PassFree(counts, 4);
    const c = new CandidateSet(["a"], "fp");
    const ahead = new Map<string, f64>();
    expect(free.any(null, c, ahead)).toBe(true);
    counts.inflight.set("a", 1);
    free.taken(null, "a", ahead);
    expect(free.any(null, c, ahead)).toBe(true);
  });
});
