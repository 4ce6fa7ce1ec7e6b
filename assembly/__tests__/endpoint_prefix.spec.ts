// The weighted scorer's prefix term: the share of the request's prefix levels each host served.
import { prefixScores } from "../policy/endpoint_metrics/prefix_signal";
import { CandidateSet } from "../services/candidates/candidates";

function set(hosts: string[]): CandidateSet { return new CandidateSet(hosts, ""); }

describe("prefixScores", () => {
  it("the deepest level a host holds, over the number of levels", () => {
    const s = prefixScores(["b:1", "b:1", "a:1", "a:1"], set(["a:1", "b:1", "c:1"]));
    expect(s[0]).toBe(1.0);
    expect(s[1]).toBe(0.5);
    expect(s[2]).toBe(0.0);
  });
  it("stops at the first absent level", () => {
    const s = prefixScores(["a:1", "", "b:1"], set(["a:1", "b:1"]));
    expect(s[0]).toBeCloseTo(1.0 / 3.0);
    expect(s[1]).toBe(0.0);
  });
  it("no levels, or hosts that are not candidates, score nothing", () => {
    expect(prefixScores([], set(["a:1"]))[0]).toBe(0.0);
    expect(prefixScores(["z:9"], set(["a:1"]))[0]).toBe(0.0);
  });
});
