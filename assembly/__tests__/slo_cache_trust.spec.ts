// predicted_latency's trust in the prefix tree per host (cache_trust.ts): the moving mean of the
// share of what the tree said was cached that the engine's usage says it found.
import { CacheTrust, TRUST_ALPHA, TRUST_MAX_HOSTS, TRUST_MIN_SAID } from "../policy/predicted_latency/cache_trust";

const X = "10.0.0.1:8000";
const Y = "10.0.0.2:8000";

describe("CacheTrust", () => {
  it("trusts every host fully until its answers say otherwise", () => {
    const t = new CacheTrust();
    expect(t.of(X)).toBe(1.0);
    t.observe(X, 0.5, 0.5);
    t.observe(X, 0.5, 0.9); // found more than said: counts as all of it
    expect(t.of(X)).toBe(1.0);
  });
  it("moves toward found / said by TRUST_ALPHA per answer, per host", () => {
    const t = new CacheTrust();
    t.observe(X, 0.8, 0.0);
    expect(t.of(X)).toBeCloseTo(1.0 - TRUST_ALPHA);
    t.observe(X, 0.8, 0.4);
    expect(t.of(X)).toBeCloseTo((1.0 - TRUST_ALPHA) + TRUST_ALPHA * (0.5 - (1.0 - TRUST_ALPHA)));
    expect(t.of(Y)).toBe(1.0);
    for (let i = 0; i < 200; i++) t.observe(X, 0.8, 0.2);
    expect(t.of(X)).toBeCloseTo(0.25, 3);
    for (let i = 0; i < 200; i++) t.observe(X, 0.8, 0.8);
    expect(t.of(X)).toBeCloseTo(1.0, 3); // a host that keeps its cache again is trusted again
  });
  it("learns nothing when the tree said little was cached, or the answer carried no usage", () => {
    const t = new CacheTrust();
    t.observe(X, TRUST_MIN_SAID * 0.5, 0.0);
    t.observe(X, 0.9, -1);
    t.observe(X, NaN, 0.0);
    expect(t.of(X)).toBe(1.0);
  });
  it("remembers at most TRUST_MAX_HOSTS hosts: beyond, every host starts again at 1", () => {
    const t = new CacheTrust();
    for (let i = 0; i < TRUST_MAX_HOSTS; i++) t.observe("10.1." + i.toString() + ":8000", 0.5, 0.0);
    expect(t.size).toBe(TRUST_MAX_HOSTS);
    expect(t.of("10.1.0:8000")).toBeLessThan(1.0);
    t.observe("10.1.0:8000", 0.5, 0.0); // a host it knows: nothing forgotten
    expect(t.size).toBe(TRUST_MAX_HOSTS);
    t.observe(X, 0.5, 0.0);
    expect(t.size).toBe(1);
    expect(t.of("10.1.0:8000")).toBe(1.0);
    expect(t.of(X)).toBeCloseTo(1.0 - TRUST_ALPHA);
  });
});
