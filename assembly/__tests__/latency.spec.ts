// Per-host latency EWMAs: time to first byte preferred over total time once observed.
import { LatencyTracker } from "../services/metrics_view/latency";

describe("LatencyTracker", () => {
  it("unknown hosts read NaN; the first sample sets the average, later ones move it by alpha", () => {
    const t = new LatencyTracker(0.5);
    expect(isNaN(t.latencyMs("a"))).toBe(true);
    t.observe("a", 100);
    expect(t.latencyMs("a")).toBe(100);
    t.observe("a", 200);
    expect(t.latencyMs("a")).toBe(150);
  });
  it("prefers time to first byte once a host has one", () => {
    const t = new LatencyTracker(0.5);
    t.observe("a", 1000);
    t.observeFirstByte("a", 40);
    expect(t.latencyMs("a")).toBe(40);
    expect(t.totalMs("a")).toBe(1000);
    t.observeFirstByte("a", 80);
    expect(t.latencyMs("a")).toBe(60);
  });
  it("begin/end measures total time per request and ignores unknown keys", () => {
    const t = new LatencyTracker(1.0);
    t.begin(1, 10);
    t.end(1, "h", 35);
    expect(t.totalMs("h")).toBe(25);
    t.end(2, "h", 99);
    expect(t.totalMs("h")).toBe(25);
  });
});
