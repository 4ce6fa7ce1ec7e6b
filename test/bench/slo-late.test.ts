// Late binding (bench/slo/slo-late-picker.ts through bench/virtual/virtual-picker.ts's hold path):
// a request no free slot can take is held at the picker and sent when a slot frees, tight deadlines
// first; its TTFT counts from the client's send, so the hold is in it. On one pod with one slot,
// the at-arrival oracle must queue a loose request ahead of a tight one and the tight one misses;
// held, the tight one goes first and both meet their SLO.
import { describe, expect, it } from "vitest";
import { clientTimes, runSloJobs, type SloFleet, type SloJob } from "../../bench/slo/virtual-run.js";

const ONE_SLOT: SloFleet = { pods: 1, profile: "llama-8b-h100", profileOverrides: { maxNumSeqs: 1 } };
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i % 50}`).join(" ");
const slo = (ttft: number, tpot: number): Array<[string, string]> => [["x-slo-ttft-ms", String(ttft)], ["x-slo-tpot-ms", String(tpot)]];
// A: short, takes the slot at once; B: loose, long output; C: tight, short, arrives just after B.
const JOBS: SloJob[] = [
  { at: 0, prompt: words(100), maxTokens: 4, headers: slo(600, 30) },
  { at: 1, prompt: words(100), maxTokens: 96, headers: slo(600, 30) },
  { at: 2, prompt: words(100), maxTokens: 4, headers: slo(150, 11) },
];

async function run(policy: "slo_oracle" | "slo_oracle_late" | "slo_oracle_late_fastest") {
  const r = await runSloJobs({ policy, fleet: ONE_SLOT, seed: 5, jobs: JOBS });
  return r.outcomes.map((o, i) => ({ o, ...clientTimes(o, r.starts[i]) }));
}

describe("slo_oracle_late in a virtual run", () => {
  it("holds a request while the slot is taken, sends it when the slot frees, tight deadline first; TTFT includes the hold", async () => {
    const [a, b, c] = await run("slo_oracle_late");
    for (const x of [a, b, c]) expect(x.o.status).toBe(200);
    expect(a.o.debug).toMatch(/^slo_oracle_late:slo_tpot_fit:held=0\.000:/);
    // C was held until A's last token (the slot freed), then went before B (deadline 152 < 601).
    const held = Number(c.o.debug.match(/:held=([0-9.]+):/)![1]);
    expect(held).toBeGreaterThan(0);
    expect(2 + held).toBeGreaterThanOrEqual(a.o.tokenMs.at(-1)!);
    expect(c.o.firstTokenMs!).toBeLessThan(b.o.firstTokenMs!);
    // The client's TTFT is the hold plus the forecast from the send (exact: nothing else arrived).
    expect(c.ttft!).toBeGreaterThan(held);
    expect(Math.abs(Number(c.o.debug.match(/:ttft=([0-9.]+):/)![1]) - c.ttft!)).toBeLessThan(0.001);
    expect(c.ttft!).toBeLessThanOrEqual(150);
    expect(b.ttft!).toBeLessThanOrEqual(600);
    expect(b.tpot!).toBeLessThanOrEqual(30);
  });

  it("meets the tight SLO the at-arrival oracle misses (it queued C behind B's 96 tokens)", async () => {
    const oracle = await run("slo_oracle");
    expect(oracle[2].ttft!).toBeGreaterThan(150);
    expect(oracle[2].o.firstTokenMs!).toBeGreaterThan(oracle[1].o.firstTokenMs!);
    const late = await run("slo_oracle_late");
    expect(late[2].ttft!).toBeLessThanOrEqual(150);
  });

  it("fastest (the TTFT bound with late binding): held in arrival order, the SLO ignored, so C waits behind B", async () => {
    const [a, b, c] = await run("slo_oracle_late_fastest");
    for (const x of [a, b, c]) expect(x.o.status).toBe(200);
    expect(b.o.debug).toMatch(/^slo_oracle_late:fastest:held=/);
    expect(c.o.firstTokenMs!).toBeGreaterThan(b.o.firstTokenMs!);
    expect(c.ttft!).toBeGreaterThan(150);
  });
});
