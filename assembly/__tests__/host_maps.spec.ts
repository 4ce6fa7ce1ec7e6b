// Per-host maps a VM keeps for its life hold at most HOSTS_KEPT hosts (util/host_maps.ts): pods come
// and go with new addresses. The metrics policies' latency estimates are one such map.
import { HOSTS_KEPT, roomFor } from "../util/host_maps";
import { LatencyTracker } from "../services/metrics_view/latency";

describe("roomFor", () => {
  it("empties a full map before a new host, never for a host it holds", () => {
    const m = new Map<string, f64>();
    for (let i = 0; i < HOSTS_KEPT; i++) { roomFor(m, "h" + i.toString()); m.set("h" + i.toString(), 1.0); }
    expect(m.size).toBe(HOSTS_KEPT);
    roomFor(m, "h7");
    expect(m.size).toBe(HOSTS_KEPT);
    roomFor(m, "new");
    expect(m.size).toBe(0);
  });
});

describe("LatencyTracker", () => {
  it("keeps estimates of at most HOSTS_KEPT hosts however many addresses come and go", () => {
    const t = new LatencyTracker(0.5);
    for (let i = 0; i < HOSTS_KEPT * 2 + 3; i++) {
      t.observe("10.2." + i.toString() + ":8000", 100.0);
      t.observeFirstByte("10.2." + i.toString() + ":8000", 20.0);
    }
    const last = "10.2." + (HOSTS_KEPT * 2 + 2).toString() + ":8000";
    expect(t.latencyMs(last)).toBe(20.0);
    expect(t.totalMs(last)).toBe(100.0);
    expect(isNaN(t.totalMs("10.2.0:8000"))).toBe(true); // forgotten when the map was full
    expect(t.hostsKept).toBeLessThanOrEqual(HOSTS_KEPT);
  });
});
