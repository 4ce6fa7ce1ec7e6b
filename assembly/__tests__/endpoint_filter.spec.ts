// Specs of endpoint_metrics' pure picking: GIE/Higress bands and filter tree (expected survivors
// worked out by hand from the algorithm), weighted scores, saturation, stale-metric correction.
import { MetricsSettings } from "../config/metrics_settings";
import { HostView } from "../services/metrics_view/host_view";
import { allIndices, highestBand, lowestBand } from "../policy/endpoint_metrics/bands";
import { filterTree } from "../policy/endpoint_metrics/filter_tree";
import { inverseRangeScores, loraScore, weightedScores } from "../policy/endpoint_metrics/weighted";
import { isSaturated, saturationLevel, unsaturated } from "../policy/endpoint_metrics/saturation";
import { adapterNamed } from "../policy/endpoint_metrics/adapter";
import { staleView, view } from "./endpoint_helpers";

// Defaults: loraQueueThreshold 50, queueThreshold 5, kvThreshold 0.8, queueLimit 5, kvLimit 0.8,
// weights queue 2, kv 2, lora 1, latency 0.
const s = new MetricsSettings();

describe("bands (min <= v <= min + (max - min) / n)", () => {
  it("queue band uses GIE's integer width", () => {
    // min 0, max 10, n 4: width floor(2.5) = 2 -> values 0 and 2 survive, 3 does not.
    expect(lowestBand(allIndices(4), [0, 3, 10, 2], true)).toStrictEqual([0, 3]);
    // The float path (KV): width 10 / 3 = 3.33.
    expect(lowestBand(allIndices(3), [0, 3.4, 10], false)).toStrictEqual([0]);
    expect(lowestBand(allIndices(3), [0, 3.3, 10], false)).toStrictEqual([0, 1]);
  });

  it("KV band keeps the lowest fraction; all equal keeps all", () => {
    expect(lowestBand(allIndices(4), [0.1, 0.5, 0.2, 0.9], false)).toStrictEqual([0, 2]);
    expect(lowestBand(allIndices(3), [0.4, 0.4, 0.4], false)).toStrictEqual([0, 1, 2]);
  });

  it("works on a subset and skips NaN", () => {
    // Over {1, 3}: min 5, max 6, width floor(1 / 2) = 0 -> only the 5.
    expect(lowestBand([1, 3], [0, 5, 9, 6], true)).toStrictEqual([1]);
    expect(lowestBand([0, 1, 2], [NaN, 4, 2], false)).toStrictEqual([2]);
  });

  it("highest band mirrors it (metric_policy most)", () => {
    expect(highestBand(allIndices(4), [1, 9, 7, 2])).toStrictEqual([1, 2]); // 9 - 8 / 4 = 7
  });

  it("infinite values: the width comes from the finite ones; an infinite best keeps the hosts at it", () => {
    // Every host at +Inf (a queue an engine printed as +Inf, or sums that overflowed): all tie.
    expect(lowestBand(allIndices(3), [Infinity, Infinity, Infinity], true)).toStrictEqual([0, 1, 2]);
    expect(lowestBand(allIndices(2), [Infinity, Infinity], false)).toStrictEqual([0, 1]);
    // One +Inf among finite values: the band is the finite one's (min 0, max 8, n 3: floor 2.67 = 2).
    expect(lowestBand(allIndices(4), [0, 8, Infinity, 2], true)).toStrictEqual([0, 3]);
    expect(lowestBand(allIndices(3), [NaN, Infinity, 5], false)).toStrictEqual([2]);
    // A -Inf is the lowest there is.
    expect(lowestBand(allIndices(3), [-Infinity, 1, -Infinity], false)).toStrictEqual([0, 2]);
    expect(highestBand(allIndices(3), [1, Infinity, 3])).toStrictEqual([1]);
    expect(highestBand(allIndices(3), [-Infinity, -Infinity, NaN])).toStrictEqual([0, 1]);
    expect(highestBand(allIndices(4), [1, 9, -Infinity, 7])).toStrictEqual([1, 3]); // 9 - 8 / 4 = 7
  });
});

describe("filterTree (metric_policy default)", () => {
  it("no adapter, low queues: least-queue band then least-KV band", () => {
    // queue band {0 (0), 3 (2)}; KV of those 0.5, 0.3: width 0.1 -> only 0.3 survives.
    const views = [view("a", 0, 0.5), view("b", 3, 0.1), view("c", 10, 0.1), view("d", 2, 0.3)];
    expect(filterTree(views, "", false, s)).toStrictEqual([3]);
  });

  it("all queues above loraQueueThreshold: least-queue band over all, then KV", () => {
    // min 55, max 100, width floor(45 / 4) = 11 -> 60 and 55; KV 0.2 vs 0.6 -> 0.2.
    const views = [view("a", 60, 0.2), view("b", 70, 0.0), view("c", 100, 0.0), view("d", 55, 0.6)];
    expect(filterTree(views, "", false, s)).toStrictEqual([0]);
  });

  it("LoRA affinity wins over a shorter queue elsewhere", () => {
    const views = [view("a", 10, 0.2, 4, ["a1"], 2), view("b", 0, 0.0, 0, [], 2), view("c", 12, 0.2, 4, ["a1"], 2)];
    // Affine {a, c}; queue band: min 10, max 12, width 1 -> a.
    expect(filterTree(views, "a1", false, s)).toStrictEqual([0]);
  });

  it("no host runs the adapter: hosts with a free LoRA slot", () => {
    const views = [view("a", 0, 0.1, 1, ["a1"], 1), view("b", 5, 0.1, 1, [], 2), view("c", 3, 0.1, 1, ["a1"], 2), view("d", 0, 0.1, 1, ["a1"], 1)];
    // can load: b (0 < 2), c (1 < 2); queue band min 3, max 5, width 1 -> c.
    expect(filterTree(views, "a2", false, s)).toStrictEqual([2]);
  });

  it("loraQueueThreshold is configurable: above it, queue comes before LoRA", () => {
    const t = new MetricsSettings();
    t.loraQueueThreshold = 5;
    const views = [view("a", 20, 0.1, 1, ["a1"], 2), view("b", 6, 0.1, 1, [], 2)];
    // Both >= 5: least-queue band first (min 6, max 20, width 7 -> b), then LoRA cost keeps b.
    expect(filterTree(views, "a1", false, t)).toStrictEqual([1]);
    // With Higress's 50 both are "low queue" and affinity picks a.
    expect(filterTree(views, "a1", false, s)).toStrictEqual([0]);
  });

  it("sheddable requests only go to hosts with queue <= queueThreshold and KV <= kvThreshold", () => {
    const views = [view("a", 6, 0.1), view("b", 2, 0.85), view("c", 0, 0.5)];
    expect(filterTree(views, "", true, s)).toStrictEqual([2]);
    const t = new MetricsSettings();
    t.kvThreshold = 0.9;
    // b qualifies now: queue band {b (2), c (0)}: min 0, max 2, width 1 -> c.
    expect(filterTree(views, "", true, t)).toStrictEqual([2]);
    const full = [view("a", 6, 0.1), view("b", 2, 0.85)];
    expect(filterTree(full, "", true, s)).toHaveLength(0);
  });

  it("uses in-flight requests the scrape has not seen yet", () => {
    const a = view("a", 0, 0.1, 2);
    a.inflight = 12; // 10 sent since the scrape
    const b = view("b", 3, 0.1, 2);
    b.inflight = 5;
    expect(a.effectiveWaiting()).toBe(10);
    expect(b.effectiveWaiting()).toBe(3);
    expect(filterTree([a, b], "", false, s)).toStrictEqual([1]);
  });
});

describe("HostView", () => {
  it("stale or missing metrics fall back to in-flight counts", () => {
    const v = staleView("a", 4);
    expect(v.hasMetrics()).toBe(false);
    expect(v.effectiveWaiting()).toBe(4);
    expect(v.kvUsage()).toBe(0);
    const w = view("b", 5, 0.5);
    w.fresh = false;
    expect(w.effectiveWaiting()).toBe(0);
  });
});

describe("weighted scoring", () => {
  it("queue score (maxQ - q) / (maxQ - minQ), 1 when all equal", () => {
    expect(inverseRangeScores([0, 5, 10])).toStrictEqual([1.0, 0.5, 0.0]);
    expect(inverseRangeScores([3, 3])).toStrictEqual([1.0, 1.0]);
    expect(inverseRangeScores([NaN, 2, 4])).toStrictEqual([1.0, 1.0, 0.0]);
  });

  it("range scores over the finite values: +Inf worst (0), -Inf best (1), never NaN", () => {
    expect(inverseRangeScores([Infinity, 9])).toStrictEqual([0.0, 1.0]);
    expect(inverseRangeScores([Infinity, 0, 10])).toStrictEqual([0.0, 1.0, 0.0]);
    expect(inverseRangeScores([-Infinity, 4, 8])).toStrictEqual([1.0, 1.0, 0.0]);
    expect(inverseRangeScores([Infinity, Infinity])).toStrictEqual([0.0, 0.0]);
  });

  it("LoRA score 1 / 0.8 / 0.6 / 0", () => {
    expect(loraScore(view("a", 0, 0, 0, ["x"], 1), "x")).toBe(1.0);
    expect(loraScore(view("a", 0, 0, 0, [], 1), "x")).toBe(0.8);
    const waiting = view("a", 0, 0, 0, ["y"], 1);
    waiting.metrics!.waitingLora = ["x"];
    expect(loraScore(waiting, "x")).toBe(0.6);
    expect(loraScore(view("a", 0, 0, 0, ["y"], 1), "x")).toBe(0.0);
    expect(loraScore(view("a", 0, 0, 0, ["y"], 1), "")).toBe(1.0);
  });

  it("sums weighted scores; the best (and ties) win", () => {
    const s = new MetricsSettings(); // queue 2, kv 2, lora 1, latency 0
    const views = [view("a", 0, 0.9), view("b", 10, 0.0), view("c", 5, 0.2)];
    // a: 2*1 + 2*0.1 + 1 = 3.2; b: 0 + 2 + 1 = 3.0; c: 2*0.5 + 2*0.8 + 1 = 3.6
    const r = weightedScores(views, "", s);
    expect(r.best).toStrictEqual([2]);
    expect(Math.abs(r.totals[0] - 3.2) < 1e-9).toBe(true);
    const tie = weightedScores([view("a", 1, 0.5), view("b", 1, 0.5)], "", s);
    expect(tie.best).toStrictEqual([0, 1]);
  });

  it("latency weight prefers the faster host; unknown latency counts as best", () => {
    const s = new MetricsSettings();
    s.latencyWeight = 5;
    const a = view("a", 0, 0.1);
    const b = view("b", 0, 0.1);
    a.latencyMs = 900;
    b.latencyMs = 300;
    expect(weightedScores([a, b], "", s).best).toStrictEqual([1]);
    const c = view("c", 0, 0.1); // never observed: tried, not avoided
    expect(weightedScores([a, b, c], "", s).best).toStrictEqual([1, 2]);
  });
});

describe("saturation", () => {
  it("max(waiting / queueLimit, kv / kvLimit) >= 1", () => {
    expect(saturationLevel(view("a", 5, 0.2), s, 1.0)).toBe(1.0);
    expect(isSaturated(view("a", 4, 0.2), s, 1.0, true)).toBe(false);
    expect(isSaturated(view("a", 0, 0.8), s, 1.0, true)).toBe(true);
    // Low priority at half the limits: 3 waiting is 3 / 2.5 >= 1.
    expect(isSaturated(view("a", 3, 0.2), s, 0.5, true)).toBe(true);
  });

  it("a limit of 0 disables its term", () => {
    const t = new MetricsSettings();
    t.queueLimit = 0;
    expect(isSaturated(view("a", 500, 0.2), t, 1.0, true)).toBe(false);
  });

  it("stale hosts count as saturated only while another host has fresh metrics", () => {
    const views: HostView[] = [staleView("a", 0), view("b", 1, 0.1)];
    expect(unsaturated(views, s, 1.0)).toStrictEqual([1]);
    expect(unsaturated([staleView("a", 0), staleView("b", 9)], s, 1.0)).toStrictEqual([0, 1]);
    const t = new MetricsSettings();
    t.stalePolicy = "inflight_only";
    expect(unsaturated(views, t, 1.0)).toStrictEqual([0, 1]);
  });

  it("in-flight correction can saturate a host whose scrape looked idle", () => {
    const a = view("a", 0, 0.1, 0);
    a.inflight = 8;
    expect(isSaturated(a, s, 1.0, true)).toBe(true);
  });
});

describe("adapter detection", () => {
  it("a model is an adapter when a server lists it or it is configured", () => {
    const views = [view("a", 0, 0, 0, ["sql-lora"], 2)];
    views[0].metrics!.waitingLora = ["chat-lora"];
    expect(adapterNamed("sql-lora", views, [])).toBe("sql-lora");
    expect(adapterNamed("chat-lora", views, [])).toBe("chat-lora");
    expect(adapterNamed("new-lora", views, ["new-lora"])).toBe("new-lora");
    expect(adapterNamed("meta-llama/Llama-3.1-8B", views, [])).toBe("");
  });
});
