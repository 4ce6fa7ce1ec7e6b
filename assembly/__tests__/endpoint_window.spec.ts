// Specs of the rate_limit pick window (Higress's sliding window: last N picks within T) and of
// the shared-data codec of parsed host reports.
import { PickWindow } from "../policy/endpoint_metrics/pick_window";
import { HostReport, decodeReport, encodeReport } from "../services/metrics_view/codec";
import { EngineMetrics, parseEngineMetrics } from "../metrics/engine_metrics";
import { VLLM_V0X_METRICS } from "./metrics_fixtures";

describe("PickWindow", () => {
  it("shares of the last N picks; the oldest drop out", () => {
    const w = new PickWindow(3, 60000);
    w.push("a", 0);
    w.push("a", 1);
    w.push("b", 2);
    expect(w.size(3)).toBe(3);
    expect(w.count("a", 3)).toBe(2);
    expect(w.overLimit("a", 0.5, 3)).toBe(true);
    expect(w.overLimit("b", 0.5, 3)).toBe(false);
    w.push("c", 4);
    expect(w.count("a", 4)).toBe(1);
    expect(w.overLimit("a", 0.5, 4)).toBe(false);
  });

  it("entries older than the window are forgotten", () => {
    const w = new PickWindow(100, 1000);
    w.push("a", 0);
    w.push("a", 500);
    expect(w.count("a", 1200)).toBe(1);
    expect(w.size(2000)).toBe(0);
    expect(w.share("a", 2000)).toBe(0);
  });

  it("a limit of 1 never triggers (Higress: share > limit)", () => {
    const w = new PickWindow(10, 60000);
    w.push("a", 0);
    expect(w.overLimit("a", 1.0, 1)).toBe(false);
    expect(w.overLimit("a", 0.99, 1)).toBe(true);
  });

  it("round-trips through its binary form; garbage decodes as empty", () => {
    const w = new PickWindow(10, 60000);
    w.push("10.0.0.1:8000", 5);
    w.push("10.0.0.2:8000", 6);
    const copy = new PickWindow(10, 60000);
    copy.decode(w.encode());
    expect(copy.count("10.0.0.1:8000", 7)).toBe(1);
    expect(copy.count("10.0.0.2:8000", 7)).toBe(1);
    copy.decode(new ArrayBuffer(5));
    expect(copy.size(7)).toBe(0);
  });
});

describe("host report codec", () => {
  it("round-trips a parsed vLLM body", () => {
    const m = parseEngineMetrics(VLLM_V0X_METRICS);
    const r = decodeReport(encodeReport(new HostReport(0xDEADBEEFCAFEF00D, 1234.5, m, 7.0)))!;
    expect(r.fingerprint).toBe(0xDEADBEEFCAFEF00D);
    expect(r.observedAtMs).toBe(1234.5);
    expect(r.gauge).toBe(7.0);
    expect(r.metrics.running).toBe(m.running);
    expect(r.metrics.waiting).toBe(m.waiting);
    expect(r.metrics.kvUsage).toBe(m.kvUsage);
    expect(r.metrics.valid).toBe(true);
    expect(r.metrics.runningLora).toStrictEqual(m.runningLora);
    expect(r.metrics.maxLora).toBe(m.maxLora);
    expect(r.metrics.engine).toBe("vllm");
  });

  it("adapter names with a line break or a percent sign round-trip (a label value may hold either)", () => {
    const m = new EngineMetrics();
    m.valid = true;
    m.loraSeen = true;
    m.runningLora = ["x\ny", "50%0A", "%25", "plain"];
    m.waitingLora = ["\n"];
    const r = decodeReport(encodeReport(new HostReport(1, 2, m, NaN)));
    expect(r).not.toBeNull();
    expect(r!.metrics.runningLora).toStrictEqual(["x\ny", "50%0A", "%25", "plain"]);
    expect(r!.metrics.waitingLora).toStrictEqual(["\n"]);
    expect(r!.metrics.valid).toBe(true);
  });

  it("NaN gauge survives; unknown text is refused", () => {
    const r = decodeReport(encodeReport(new HostReport(1, 2, new EngineMetrics(), NaN)))!;
    expect(isNaN(r.gauge)).toBe(true);
    expect(r.metrics.valid).toBe(false);
    expect(decodeReport("hello")).toBeNull();
    expect(decodeReport("")).toBeNull();
  });
});
