// predicted_latency without an SLO on a workload of shared prefixes (virtual time: the real .wasm,
// real Lua on a real Redis, simulated engines with prefix caches). Its choice weighs what
// recomputing a prefix another pod holds costs the streams there (evaluation.ts recomputeCost);
// scored by its own latency alone it spread the groups and recomputed their system prompts (on
// this run KV hit 52% against prefix_cache's 91%; now 85%, TTFT p90 65 against 63 ms;
// bench/RESULTS.md 12.1j).
import { describe, expect, it } from "vitest";
import { sharedPrefix } from "../../bench/scenarios/inference-perf.js";
import { runVirtualScenario } from "../../bench/virtual/run-virtual.js";

describe("predicted_latency without an SLO, shared prefixes", () => {
  it("keeps each prefix where it is cached about as well as prefix_cache, at about its TTFT", async () => {
    const report = await runVirtualScenario(sharedPrefix, { seed: 7, quiet: true, policies: ["prefix_cache", "predicted_latency"] });
    const [affinity, predicted] = report.runs.map((r) => r.summary!);
    expect(predicted.failed).toBe(0);
    expect(predicted.kvHitRate).toBeGreaterThan(affinity.kvHitRate - 0.1);
    expect(predicted.ttftMs.p90).toBeLessThan(affinity.ttftMs.p90 * 1.15);
  }, 60_000);
});
