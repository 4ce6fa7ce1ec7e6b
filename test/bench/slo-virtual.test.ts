// The SLO benchmarks in virtual time (bench/slo/): the virtual gateway hands predicted_latency the
// first token's chunk when the engine emits it (so the model learns TTFT, not the whole response),
// carries the SLO headers to the plugin and the debug header back, and a seed gives one result.
// Real release .wasm, real Lua scripts on a real redis-server the run starts, simulated engines.
import { describe, expect, it } from "vitest";
import { heteroJobs, HETERO_FLEET } from "../../bench/slo/hetero.js";
import { clientTimes, runSloJobs } from "../../bench/slo/virtual-run.js";

async function run(seed: number) {
  const jobs = heteroJobs(8, 8, seed);
  const out = await runSloJobs({
    policy: "predicted_latency", lbConfig: { modelBatchSlots: 4, sloExploration: 0 }, fleet: HETERO_FLEET, seed,
    jobs: jobs.map((j) => ({ at: j.at, prompt: j.prompt, maxTokens: j.maxTokens, headers: [["x-slo-ttft-ms", String(j.slo.ttft)], ["x-slo-tpot-ms", String(j.slo.tpot)]] as Array<[string, string]> })),
  });
  return { jobs, out };
}

describe("slo-hetero in virtual time", () => {
  it("predicts TTFT (not the whole response) once learned, and one seed gives one result", async () => {
    const a = await run(21);
    expect(a.out.outcomes.every((o) => o.status === 200)).toBe(true);
    const rows = a.out.outcomes.map((o, i) => {
      const m = o.debug.match(/predicted_latency:([a-z_]+):ttft=([0-9.na]+):tpot=([0-9.na]+)/);
      const t = clientTimes(o, a.out.starts[i]);
      return { reason: m?.[1] ?? "", pred: Number(m?.[2]), ttft: t.ttft!, e2e: o.endMs - a.out.starts[i] };
    });
    // Every decision went through the model's choice; the last half predicted with a model.
    const half = Math.floor(rows.length / 2);
    const late = rows.slice(half);
    expect(late.every((r) => r.reason.startsWith("slo_"))).toBe(true);
    // Long-output requests take ~10x their TTFT: a model that learned e2e would predict far above.
    const longOut = late.filter((r, i) => a.jobs[half + i].maxTokens === 96 && r.e2e > 5 * r.ttft);
    expect(longOut.length).toBeGreaterThan(5);
    for (const r of longOut) expect(r.pred).toBeLessThan(r.e2e / 2);
    const b = await run(21);
    expect(b.out.outcomes.map((o) => [o.pod, o.debug, o.firstTokenMs])).toEqual(a.out.outcomes.map((o) => [o.pod, o.debug, o.firstTokenMs]));
  }, 120_000);
});
