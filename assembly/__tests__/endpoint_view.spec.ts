// HostView's stale-scrape corrections: requests in flight beyond what the server reported count
// as waiting and scale the KV use up in proportion.
import { HostView } from "../services/metrics_view/host_view";
import { EngineMetrics } from "../metrics/engine_metrics";

function view(running: f64, waiting: f64, kv: f64, inflight: f64): HostView {
  const m = new EngineMetrics();
  m.running = running;
  m.waiting = waiting;
  m.kvUsage = kv;
  m.hasKv = true;
  m.valid = true;
  const v = new HostView("h:1");
  v.metrics = m;
  v.fresh = true;
  v.inflight = inflight;
  return v;
}

describe("HostView corrections", () => {
  it("in-flight beyond running + waiting counts as waiting", () => {
    expect(view(4, 1, 0.5, 8).effectiveWaiting()).toBe(4.0);
    expect(view(4, 1, 0.5, 3).effectiveWaiting()).toBe(1.0);
  });
  it("KV use scales with the unseen requests, capped at 1", () => {
    expect(view(4, 0, 0.4, 6).kvUsage()).toBeCloseTo(0.6);
    expect(view(4, 0, 0.4, 4).kvUsage()).toBeCloseTo(0.4);
    expect(view(2, 0, 0.6, 10).kvUsage()).toBe(1.0);
  });
  it("an idle server's KV use is not extrapolated (nothing to scale from)", () => {
    expect(view(0, 0, 0.1, 5).kvUsage()).toBeCloseTo(0.1);
    expect(view(0, 0, 0.1, 5).effectiveWaiting()).toBe(5.0);
  });
  it("without fresh metrics: waiting = in-flight, KV unknown (0)", () => {
    const v = view(4, 1, 0.5, 3);
    v.fresh = false;
    expect(v.effectiveWaiting()).toBe(3.0);
    expect(v.kvUsage()).toBe(0.0);
  });
});
