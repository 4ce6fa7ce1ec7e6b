// The SLO oracle (bench/slo/slo-oracle-picker.ts): its forecasts are the engines' own future, so in
// a virtual run every request whose pod took no other request before its first token (its last
// token) got exactly the forecast TTFT (TPOT); its choice is predicted_latency's tpot_fit rule.
// Proxy policy: no gateway, no Redis.
import { describe, expect, it } from "vitest";
import { heteroJobs, HETERO_FLEET, sloHeaders } from "../../bench/slo/hetero.js";
import { fastest, protectFit, tpotFit } from "../../bench/slo/oracle-choice.js";
import { clientTimes, runSloJobs } from "../../bench/slo/virtual-run.js";

/** 10 s of the mixed workload at 16 req/s through an oracle policy (seed 31). */
function oracleRun(policy: "slo_oracle" | "slo_oracle_blind") {
  return runSloJobs({
    policy, fleet: HETERO_FLEET, seed: 31,
    jobs: heteroJobs(16, 10, 31).map((j) => ({ at: j.at, prompt: j.prompt, maxTokens: j.maxTokens, headers: sloHeaders(j) })),
  });
}

describe("slo_oracle in a virtual run", () => {
  it("forecasts each request's TTFT and TPOT exactly unless a later request joined its pod in time", async () => {
    const run = await oracleRun("slo_oracle");
    const rows = run.outcomes.map((o, i) => {
      const m = o.debug.match(/^slo_oracle:([a-z_]+):ttft=([0-9.]+):tpot=([0-9.]+)$/);
      expect(m, o.debug).not.toBeNull();
      const t = clientTimes(o, run.starts[i]);
      return { pod: o.pod, start: run.starts[i], first: o.firstTokenMs!, last: o.tokenMs.at(-1)!, ttft: t.ttft!, tpot: t.tpot!, predTtft: Number(m![2]), predTpot: Number(m![3]), reason: m![1] };
    });
    const joined = (r: (typeof rows)[number], until: number) => rows.some((x) => x !== r && x.pod === r.pod && x.start > r.start && x.start < until);
    const alone = rows.filter((r) => !joined(r, r.first));
    const aloneToEnd = rows.filter((r) => !joined(r, r.last));
    expect(alone.length).toBeGreaterThan(rows.length / 2);
    expect(aloneToEnd.length).toBeGreaterThan(20);
    for (const r of alone) expect(Math.abs(r.predTtft - r.ttft)).toBeLessThan(0.001); // the debug's 3 decimals
    for (const r of aloneToEnd) expect(Math.abs(r.predTpot - r.tpot)).toBeLessThan(0.001);
    // The others still mostly exactly: a later request changes the TTFT only when it shares the first step.
    const exact = rows.filter((r) => Math.abs(r.predTtft - r.ttft) < 0.001).length;
    expect(exact / rows.length).toBeGreaterThan(0.9);
    expect(rows.filter((r) => r.reason === "slo_tpot_fit").length).toBeGreaterThan(rows.length / 2);
  }, 60_000);
});

describe("slo_oracle_blind in a virtual run", () => {
  it("forecasts with the mean API overhead: off by about the draw's spread (5-15 ms), no longer exact", async () => {
    const run = await oracleRun("slo_oracle_blind");
    const errors = run.outcomes.map((o, i) => Math.abs(Number(o.debug.match(/:ttft=([0-9.]+)/)![1]) - clientTimes(o, run.starts[i]).ttft!));
    const exact = errors.filter((e) => e < 0.001).length;
    expect(exact / errors.length).toBeLessThan(0.9); // the exact oracle: > 0.9 (above)
    const sorted = [...errors].sort((a, b) => a - b);
    expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThan(5.001); // at most half the spread, or one step moved
  }, 60_000);
});

describe("the oracle's choice", () => {
  const f = (ttftMs: number, tpotMs: number) => ({ ttftMs, tpotMs });
  const loose = { ttftMs: 600, tpotMs: 30 };
  const tight = { ttftMs: 150, tpotMs: 11 };

  it("tpot_fit: the slowest pods fast enough, then the lowest TTFT among them", () => {
    // Pods 0 and 2 slow (TPOT 16-17), 1 and 3 fast (8): a loose request goes to the slow one first free.
    const pods = [f(400, 16), f(50, 8), f(300, 17), f(40, 8)];
    expect(tpotFit(pods, loose, 96)).toEqual({ index: 2, reason: "slo_tpot_fit" });
    // Pod 2 would be late: pod 0 (still slow); then no slow pod: the fast one first free.
    expect(tpotFit([f(400, 16), f(50, 8), f(700, 17), f(40, 8)], loose, 96).index).toBe(0);
    expect(tpotFit([f(700, 16), f(50, 8), f(700, 17), f(40, 8)], loose, 96).index).toBe(3);
    expect(tpotFit(pods, tight, 96)).toEqual({ index: 3, reason: "slo_tpot_fit" });
  });

  it("none meets: the least late (most headroom); no SLO: the lowest TTFT + TPOT x tokens", () => {
    // Headrooms -1, min(-0.33, -0.45), -1.67: pod 1 is the least late, though it misses both SLOs.
    expect(tpotFit([f(300, 8), f(200, 16), f(400, 8)], tight, 96)).toEqual({ index: 1, reason: "slo_unmet" });
    expect(tpotFit([f(100, 8), f(10, 16)], { ttftMs: 0, tpotMs: 0 }, 96)).toEqual({ index: 0, reason: "lowest_latency" });
    expect(tpotFit([f(100, 8), f(10, 8.5)], { ttftMs: 0, tpotMs: 0 }, 96).index).toBe(1);
  });

  it("fastest: the lowest TTFT, whatever the SLO and the TPOT", () => {
    expect(fastest([f(400, 16), f(50, 30), f(40.5, 8), f(41, 8)])).toEqual({ index: 2, reason: "fastest" });
    expect(fastest([f(700, 50)]).index).toBe(0);
  });

  it("protect: among the pods meeting the SLO, the one leaving the most probes served, ties by tpot_fit; trade may give the request up", () => {
    const pods = [f(400, 16), f(50, 8), f(700, 17), f(40, 8)]; // pod 2 misses the loose SLO
    expect(protectFit(pods, loose, 96, () => 4, 0.01)).toEqual({ index: 0, reason: "slo_tpot_fit" });
    expect(protectFit(pods, loose, 96, (i) => (i === 1 ? 5 : 4), 0.01)).toEqual({ index: 1, reason: "slo_protect" });
    // Pod 2 keeps 3 more probes served than any other: protect never takes it, trade (0.35 a probe) does, 2 more is not enough.
    const served = (extra: number) => (i: number) => (i === 2 ? 4 + extra : 4);
    expect(protectFit(pods, loose, 96, served(3), 0.01).index).toBe(0);
    expect(protectFit(pods, loose, 96, served(3), 0.35)).toEqual({ index: 2, reason: "slo_protect" });
    expect(protectFit(pods, loose, 96, served(2), 0.35).index).toBe(0);
  });
});
