// A scenario run in virtual time hands the response body to the filter as Envoy streams a vLLM
// SSE answer: one chunk per token, then [DONE] (what predicted_latency reads its streams'
// progress from), as the SLO benchmarks and the wall-clock path do.
import { afterEach, describe, expect, it, vi } from "vitest";
import { PassThroughStream } from "../../host-test/gateway/pass-through.js";
import { smoke } from "../../bench/scenarios/smoke.js";
import { runVirtualScenario } from "../../bench/virtual/run-virtual.js";

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
});
