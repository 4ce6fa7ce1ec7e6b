// Capacity at SLO (bench/capacity.ts): the sweep stops at the first rate that misses, bisection
// narrows the edge, and the SLO check counts failures, TTFT p90 and TPOT p90.
import { describe, expect, it } from "vitest";
import { meetsSlo, searchCapacity } from "../../bench/capacity.js";
import type { RunSummary } from "../../bench/metrics.js";

const dist = (p90: number) => ({ mean: p90, p50: p90, p90, p99: p90, count: 1 });
function summary(ttftP90: number, opts: { tpotP90?: number; ok?: number; total?: number; outTok?: number } = {}): RunSummary {
  const total = opts.total ?? 100;
  return {
    requests: total, succeeded: opts.ok ?? total, failed: total - (opts.ok ?? total), failures: {},
    ttftMs: dist(ttftP90), tpotMs: dist(opts.tpotP90 ?? 20), itlMs: dist(20), e2eMs: dist(1000),
    requestsPerSec: 1, outputTokensPerSec: opts.outTok ?? 0, goodputPerSec: null, sloAttainment: null, kvHitRate: 0,
    pods: { requests: {}, maxOverMean: 1, cv: 0 },
  };
}

describe("meetsSlo", () => {
  const slo = { ttftP90Ms: 1000, tpotP90Ms: 50 };
  it("needs TTFT p90, TPOT p90 and the success share within bounds", () => {
    expect(meetsSlo(summary(1000), slo)).toBe(true);
    expect(meetsSlo(summary(1001), slo)).toBe(false);
    expect(meetsSlo(summary(10, { tpotP90: 51 }), slo)).toBe(false);
    expect(meetsSlo(summary(10, { ok: 98 }), slo)).toBe(false); // default 99% must succeed
    expect(meetsSlo(summary(10, { ok: 98 }), { ...slo, minSuccess: 0.95 })).toBe(true);
    expect(meetsSlo(summary(10, { total: 0 }), slo)).toBe(false);
  });
});

describe("searchCapacity", () => {
  // A system whose TTFT p90 crosses 1 s at 13 req/s.
  const measureUpTo = (edge: number, probed: number[]) => async (rate: number) => {
    probed.push(rate);
    return summary(rate <= edge ? 100 * rate / edge : 5000, { outTok: rate * 100 });
  };

  it("sweeps until the first miss, then bisects toward the edge", async () => {
    const probed: number[] = [];
    const r = await searchCapacity([4, 8, 16, 32], { ttftP90Ms: 1000 }, measureUpTo(13, probed), 2);
    expect(probed).toEqual([4, 8, 16, 12, 14]); // 32 never run; (8+16)/2 = 12 meets, (12+16)/2 = 14 misses
    expect(r.rate).toBe(12);
    expect(r.firstMiss).toBe(14);
    expect(r.outputTokensPerSec).toBe(1200);
    expect(r.points.map((p) => p.rate)).toEqual([4, 8, 12, 14, 16]);
  });

  it("reports null when even the lowest rate misses, and no miss when every rate meets", async () => {
    const low = await searchCapacity([4, 8], { ttftP90Ms: 1000 }, measureUpTo(1, []), 1);
    expect(low).toMatchObject({ rate: null, firstMiss: 2, outputTokensPerSec: null }); // 4 missed, then 2 (bisected from 0)
    const all = await searchCapacity([4, 8], { ttftP90Ms: 1000 }, measureUpTo(100, []), 3);
    expect(all).toMatchObject({ rate: 8, firstMiss: null });
  });

  it("refuses unsorted rates", async () => {
    await expect(searchCapacity([8, 4], { ttftP90Ms: 1 }, measureUpTo(1, []))).rejects.toThrow(/ascend/);
  });
});
