// Summary statistics: percentiles, TPOT, goodput, KV hit rate, pod spread, failures.
import { describe, expect, it } from "vitest";
import type { RequestRecord } from "../../bench/loadgen.js";
import { distribution, meetsSlo, nearestRank, percentile, podSpread, summarize, summarizeByTag, tpotOf } from "../../bench/metrics.js";

function rec(over: Partial<RequestRecord>): RequestRecord {
  return {
    session: "s", turn: 0, group: 0, gateway: 0, pod: "pod-0", status: 200, ok: true, error: null,
    startMs: 0, ttftMs: 100, e2eMs: 1000, itlMs: [10, 20], outputTokens: 10, promptTokens: 100, cachedTokens: 0, ...over,
  };
}

describe("percentiles", () => {
  it("interpolates between closest ranks like numpy", () => {
    const xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(percentile(xs, 50)).toBeCloseTo(5.5);
    expect(percentile(xs, 90)).toBeCloseTo(9.1);
    expect(percentile(xs, 99)).toBeCloseTo(9.91);
    expect(percentile([], 50)).toBe(0);
    expect(distribution([10, 1, 5])).toEqual({ mean: 16 / 3, p50: 5, p90: 9, p99: 9.9, count: 3 });
  });
});

describe("nearest-rank percentiles (SLO tables, wall micro-benchmarks)", () => {
  it("take index ceil(p x n) - 1: a p99 of 100 values is the 99th, a p50 of 10 the 5th", () => {
    const xs = Array.from({ length: 100 }, (_, i) => 100 - i); // unsorted on purpose
    expect(nearestRank(xs, 0.99)).toBe(99);
    expect(nearestRank(xs, 0.5)).toBe(50);
    expect(nearestRank(xs.slice(0, 10).map((v) => v - 90), 0.5)).toBe(5);
    expect(nearestRank(xs, 0.991)).toBe(100);
    expect(nearestRank(xs, 1)).toBe(100);
    expect(nearestRank(xs, 0)).toBe(1);
    expect(nearestRank([], 0.5)).toBeNaN();
  });
});

describe("per-request metrics", () => {
  it("TPOT = (E2E - TTFT) / (output - 1), none for one token", () => {
    expect(tpotOf(rec({ ttftMs: 100, e2eMs: 1000, outputTokens: 10 }))).toBe(100);
    expect(tpotOf(rec({ outputTokens: 1 }))).toBeNull();
  });

  it("meets an SLO only when every bound holds and the request succeeded", () => {
    expect(meetsSlo(rec({}), { ttftMs: 100, tpotMs: 100, e2eMs: 1000 })).toBe(true);
    expect(meetsSlo(rec({ ttftMs: 101 }), { ttftMs: 100 })).toBe(false);
    expect(meetsSlo(rec({ e2eMs: 1900 }), { tpotMs: 100 })).toBe(false); // tpot 200
    expect(meetsSlo(rec({ ok: false }), {})).toBe(false);
  });
});

describe("summarize", () => {
  const records = [
    rec({ pod: "pod-0", promptTokens: 100, cachedTokens: 80, ttftMs: 50 }),
    rec({ pod: "pod-0", promptTokens: 100, cachedTokens: 0, ttftMs: 400, outputTokens: 20 }),
    rec({ pod: "pod-1", promptTokens: 200, cachedTokens: 100, ttftMs: 150, tag: "8k" }),
    rec({ pod: null, ok: false, status: 503, error: "status 503", ttftMs: null }),
    rec({ pod: null, ok: false, status: 0, error: "timeout after 5000 ms", ttftMs: null }),
  ];

  it("counts throughput per simulated second, goodput, KV hits and failures", () => {
    const s = summarize(records, 2000, { ttftMs: 200 }, ["pod-0", "pod-1", "pod-2"]);
    expect(s).toMatchObject({ requests: 5, succeeded: 3, failed: 2, failures: { "status 503": 1, timeout: 1 } });
    expect(s.requestsPerSec).toBeCloseTo(1.5);
    expect(s.outputTokensPerSec).toBeCloseTo(20);
    expect(s.goodputPerSec).toBeCloseTo(1);
    expect(s.sloAttainment).toBeCloseTo(2 / 5); // the 2 failed requests missed their SLO too
    expect(s.kvHitRate).toBeCloseTo(180 / 400);
    expect(s.ttftMs.count).toBe(3);
    expect(s.itlMs.count).toBe(6);
    expect(s.pods.requests).toEqual({ "pod-0": 2, "pod-1": 1, "pod-2": 0 });
  });

  it("spreads: max/mean and coefficient of variation, idle pods included", () => {
    const even = podSpread([rec({ pod: "a" }), rec({ pod: "b" })]);
    expect(even.maxOverMean).toBe(1);
    expect(even.cv).toBe(0);
    const skewed = podSpread([rec({ pod: "a" }), rec({ pod: "a" })], ["a", "b"]);
    expect(skewed.maxOverMean).toBe(2);
    expect(skewed.cv).toBe(1);
  });

  it("has no goodput without SLOs, zeros for an empty run, and per-tag summaries", () => {
    expect(summarize(records, 1000).goodputPerSec).toBeNull();
    const empty = summarize([], 0);
    expect(empty).toMatchObject({ requests: 0, requestsPerSec: 0, kvHitRate: 0 });
    expect(Object.keys(summarizeByTag(records, 1000))).toEqual(["8k"]);
  });
});
