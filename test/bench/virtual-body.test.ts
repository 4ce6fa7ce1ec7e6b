// A scenario run in virtual time hands the response body to the filter as Envoy streams a vLLM
// SSE answer: one chunk per token, then [DONE] (what predicted_latency reads its streams'
// progress from), as the SLO benchmarks and the wall-clock path do.
import { afterEach, describe, expect, it, vi } from "vitest";
import { PassThroughStream } from "../../host-test/gateway/pass-through.js";
import { smoke } from "../../bench/scenarios/smoke.js";
import { runVirtualScenario } from "../../bench/virtual/run-virtual.js";
import { SimEngine } from "../../host-test/sim/engine.js";

afterEach(() => vi.restoreAllMocks());

describe("virtual scenario runs", () => {
  it("deliver one body chunk per token, then [DONE]", async () => {
    const chunks = vi.spyOn(PassThroughStream.prototype, "responseData");
    const report = await runVirtualScenario(smoke, { policies: ["round_robin"], quiet: true });
    const s = report.runs[0].summary!;
    expect(s.failed).toBe(0);
    const tokens = s.outputTokensPerSec * report.runs[0].loadgen!.durationMs / 1000;
    expect(chunks.mock.calls.length).toBe(Math.round(tokens) + s.requests);
  }, 60_000);

  it("deliver a response's end in its own event, never inside an engine step's completion", async () => {
    // The host ends the stream with its last byte (Envoy's doEndStream), so the plugin's end
    // callbacks run then; inside the step's completion they would see the other streams' tokens
    // of that step not out yet (and change SLO runs by event order alone).
    let inStep = 0;
    const proto = SimEngine.prototype as unknown as { completeStep: (...a: unknown[]) => void };
    const complete = proto.completeStep;
    vi.spyOn(proto, "completeStep").mockImplementation(function (this: unknown, ...a: unknown[]) {
      inStep++;
      try { complete.apply(this, a); } finally { inStep--; }
    });
    const ends: number[] = [];
    const original = PassThroughStream.prototype.responseData;
    vi.spyOn(PassThroughStream.prototype, "responseData").mockImplementation(function (this: PassThroughStream, ...a: Parameters<typeof original>) {
      if (a[1]) ends.push(inStep);
      return original.apply(this, a);
    });
    const report = await runVirtualScenario(smoke, { policies: ["round_robin"], quiet: true });
    expect(report.runs[0].summary!.failed).toBe(0);
    expect(ends.length).toBe(report.runs[0].summary!.requests);
    expect(ends.filter((n) => n > 0)).toEqual([]);
  }, 60_000);
});
