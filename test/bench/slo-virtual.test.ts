// The SLO benchmarks in virtual time (bench/slo/): the virtual gateway hands predicted_latency the
// first token's chunk when the engine emits it (so the model learns TTFT, not the whole response),
// carries the SLO headers to the plugin and the debug header back, and a seed gives one result.
// Real release .wasm, real Lua scripts on a real redis-server the run starts, simulated engines.
import { describe, expect, it } from "vitest";
import { heteroJobs, HETERO_FLEET, HETERO_SLOS, runHeteroVirtual, sloHeaders } from "../../bench/slo/hetero.js";
import { clientTimes, runSloJobs } from "../../bench/slo/virtual-run.js";

async function run(seed: number, rate = 8, seconds = 8, extra: Record<string, unknown> = {}) {
  const jobs = heteroJobs(rate, seconds, seed);
  const out = await runSloJobs({
    policy: "predicted_latency", lbConfig: { modelBatchSlots: 4, sloExploration: 0, ...extra }, fleet: HETERO_FLEET, seed,
    jobs: jobs.map((j) => ({ at: j.at, prompt: j.prompt, maxTokens: j.maxTokens, headers: sloHeaders(j) })),
  });
  return { jobs, out };
}

describe("slo-hetero's request classes", () => {
  it("give each request its class's SLO, the default ones or those asked for (--tight-slo / --loose-slo)", () => {
    const slos = { tight: { ttft: 150, tpot: 20 }, loose: { ttft: 600, tpot: 45 } };
    const a = heteroJobs(8, 10, 5);
    const b = heteroJobs(8, 10, 5, slos);
    expect(b.map((j) => j.cls)).toEqual(a.map((j) => j.cls)); // the same requests
    for (const [jobs, s] of [[a, HETERO_SLOS], [b, slos]] as const) {
      for (const j of jobs) expect(j.slo).toEqual(j.cls.endsWith("/tight") ? s.tight : s.loose);
    }
    expect(sloHeaders(b.find((j) => j.cls.endsWith("/tight"))!)).toEqual([["x-slo-ttft-ms", "150"], ["x-slo-tpot-ms", "20"]]);
  });
  it("--best-effort: the same requests, that share of them without SLO headers", () => {
    const a = heteroJobs(20, 30, 5);
    const b = heteroJobs(20, 30, 5, HETERO_SLOS, 0.25);
    expect(b.map((j) => [j.at, j.prompt, j.maxTokens])).toEqual(a.map((j) => [j.at, j.prompt, j.maxTokens]));
    const be = b.filter((j) => j.bestEffort);
    expect(be.length / b.length).toBeGreaterThan(0.18);
    expect(be.length / b.length).toBeLessThan(0.32);
    for (const j of be) { expect(sloHeaders(j)).toEqual([]); expect(j.cls).toMatch(/\/best-effort$/); }
    b.forEach((j, i) => { if (!j.bestEffort) expect(j.cls).toBe(a[i].cls); });
  });
});

describe("slo-hetero in virtual time", () => {
  it("--by-class: every request in one class and pod kind, met or missed for a reason; the tight TPOT is never met on a slow pod", async () => {
    const r = await runHeteroVirtual("prefix_cache", 8, 6, 31);
    const sum = (f: (c: (typeof r.byClass)[number]) => number) => r.byClass.reduce((a, c) => a + f(c), 0);
    expect(sum((c) => c.requests)).toBe(r.requests);
    for (const c of r.byClass) {
      expect(c.cls).toMatch(/^long-(prompt|output)\/(tight|loose) on (fast|slow)$/);
      expect(c.met + c.ttftOnly + c.tpotOnly + c.both + c.failed).toBe(c.requests);
    }
    expect(sum((c) => c.met) / r.requests).toBeCloseTo(r.attainment, 9);
    // prefix_cache ignores speed: a slow pod (TPOT ~14 ms) gets tight requests (TPOT SLO 11 ms) and misses them all.
    const tightSlow = r.byClass.filter((c) => /tight on slow/.test(c.cls));
    expect(sum((c) => (tightSlow.includes(c) ? c.requests : 0))).toBeGreaterThan(5);
    for (const c of tightSlow) expect(c.met).toBe(0);
    expect(r.byClass.some((c) => /on fast/.test(c.cls) && c.met > 0)).toBe(true);
    // The interference counters are predicted_latency's: none here; every request (warm-up too) counted.
    expect(r.avoided).toEqual({ picks: heteroJobs(8, 5, 32).length + r.requests, count: 0, held: 0 });
    // No prediction, no error, in any class.
    for (const c of r.byClass) { expect(c.errP90).toBeNull(); expect(c.missP90Ms).toBeNull(); }
  }, 120_000);

  it("--by-class with --tight-on-fast: both pods of that fleet are fast ones (pod-0 too)", async () => {
    const r = await runHeteroVirtual("prefix_cache", 8, 4, 31, undefined, { tightOnFast: true });
    expect(r.byClass.map((c) => c.cls).every((c) => / on fast$/.test(c))).toBe(true);
    expect(r.byClass.reduce((a, c) => a + c.requests, 0)).toBe(r.requests);
  }, 120_000);

  it("--by-class: predicted_latency's TTFT error p90 per class, the overall p90 within their range", async () => {
    const r = await runHeteroVirtual("predicted_latency", 8, 6, 31, { modelBatchSlots: 4 });
    const errs = r.byClass.map((c) => c.errP90).filter((e): e is number => e !== null);
    expect(errs.length).toBeGreaterThan(1);
    expect(r.predErrP90).not.toBeNull();
    expect(r.predErrP90!).toBeGreaterThanOrEqual(Math.min(...errs));
    expect(r.predErrP90!).toBeLessThanOrEqual(Math.max(...errs));
    // The same misses in ms, wherever there is a prediction.
    for (const c of r.byClass) {
      if (c.errP90 === null) continue;
      expect(c.missP90Ms).toBeGreaterThan(0);
    }
  }, 120_000);

  it("--ttft-bound: the model's row matches the run's error, and knowing more never leaves the replay worse at p90", async () => {
    const plain = await runHeteroVirtual("predicted_latency", 8, 6, 31, { modelBatchSlots: 4 });
    expect(plain.bound).toBeNull();
    const r = await runHeteroVirtual("predicted_latency", 8, 6, 31, { modelBatchSlots: 4 }, { ttftBound: true });
    expect(r.attainment).toBe(plain.attainment);
    const rows = new Map(r.bound!.map((b) => [b.predictor, b]));
    expect(rows.size).toBe(5);
    const model = rows.get("the plugin's model (debug header)")!;
    expect(model.p90).toBeCloseTo(r.predErrP90!, 6);
    const pick = rows.get("steps replayed, the pick's knowledge")!;
    const both = rows.get("+ both (the engine but its jitter)")!;
    expect(pick.requests).toBe(model.requests);
    // Told everything, the replay misses by the step jitter (+-7% a step, which can also move a
    // request to the next step): well under the model's miss.
    expect(both.p90).toBeLessThan(0.15);
    expect(both.p90).toBeLessThan(model.p90 / 2);
    expect(both.p90).toBeLessThanOrEqual(pick.p90);
  }, 120_000);

  it("--redis-traffic: the plugin's Redis calls and bytes; the records exchange (sloShareReplicasMs) adds to both with 2 gateways", async () => {
    const off = await runHeteroVirtual("predicted_latency", 8, 6, 31, { modelBatchSlots: 4 }, { gateways: 2 });
    const on = await runHeteroVirtual("predicted_latency", 8, 6, 31, { modelBatchSlots: 4, sloShareReplicasMs: 20 }, { gateways: 2 });
    expect(off.redis!.calls).toBeGreaterThan(off.avoided.picks); // a pick's reads, its lease, its release, the model
    expect(off.redis!.sent).toBeGreaterThan(0);
    expect(on.redis!.calls).toBeGreaterThan(off.redis!.calls);
    expect(on.redis!.received).toBeGreaterThan(off.redis!.received);
  }, 120_000);

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

  it("near capacity: the predicted slot wait tells the waits apart, and tpot_fit keeps loose requests on the slow pods", async () => {
    const a = await run(23, 22, 12);
    const slow = new Set(HETERO_FLEET.slowPods!.map((i) => `pod-${i}`));
    const rows = a.out.outcomes.map((o, i) => {
      const m = o.debug.match(/predicted_latency:([a-z_]+):ttft=([0-9.na]+):tpot=[0-9.na]+:q=[0-9.na]+:wait=([0-9.na]+)/);
      return { reason: m?.[1] ?? "", wait: Number(m?.[3]), ttft: clientTimes(o, a.out.starts[i]).ttft!, pod: o.pod ?? "", job: a.jobs[i] };
    }).slice(40);
    const median = (v: number[]) => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)];
    const none = rows.filter((r) => r.wait === 0).map((r) => r.ttft);
    const long = rows.filter((r) => r.wait > 100).map((r) => r.ttft);
    expect(long.length).toBeGreaterThan(20);
    // A wait predicted over 100 ms is a wait indeed (the observed TTFT is far above the no-wait one).
    expect(median(long)).toBeGreaterThan(median(none) + 80);
    const fit = rows.filter((r) => r.reason === "slo_tpot_fit");
    const looseOnSlow = fit.filter((r) => r.job.slo.tpot === 30 && slow.has(r.pod)).length / fit.filter((r) => r.job.slo.tpot === 30).length;
    const tightOnSlow = fit.filter((r) => r.job.slo.tpot === 11 && slow.has(r.pod)).length;
    expect(looseOnSlow).toBeGreaterThan(0.5);
    expect(tightOnSlow).toBe(0);
  }, 120_000);

  it("late binding (sloHoldMs) meets more SLOs near capacity: requests wait at the gateway for a free slot, never past the hold", async () => {
    const met = (r: Awaited<ReturnType<typeof run>>) => r.out.outcomes.filter((o, i) => {
      const t = clientTimes(o, r.out.starts[i]);
      const slo = r.jobs[i].slo;
      return o.status === 200 && t.ttft !== null && t.ttft <= slo.ttft && (t.tpot === null || t.tpot <= slo.tpot);
    }).length / r.jobs.length;
    const without = await run(23, 22, 20);
    const held = await run(23, 22, 20, { sloHoldMs: 2000 });
    const times = held.out.outcomes.map((o) => Number(o.debug.match(/:held=([0-9.]+)/)?.[1] ?? 0));
    expect(times.filter((ms) => ms > 0).length).toBeGreaterThan(50);
    expect(Math.max(...times)).toBeLessThanOrEqual(2000 + 10); // sloHoldMs, noticed within a tick
    expect(without.out.outcomes.some((o) => /:held=/.test(o.debug))).toBe(false);
    expect(met(held)).toBeGreaterThan(met(without) + 0.03);
  }, 120_000);
});
