// cluster_metrics' pure parts: settings (every Higress key, defaults, refused values), the
// AdaptiveScore EWMA and score formula, the pick window behind rate_limit, and the four modes.
import { parseJsonString } from "../json/parse";
import { ConfigErrors, ConfigReader } from "../config/reader";
import { Xorshift } from "../util/prng";
import { ClusterMetricsSettings, parseClusterMetricsSettings, parseMode, MODE_ADAPTIVE_SCORE, MODE_LEAST_BUSY,
  MODE_LEAST_TOTAL_LATENCY, MODE_LEAST_FIRST_TOKEN_LATENCY } from "../config/cluster_metrics_settings";
import { AdaptiveState, ScoreWeights, adaptiveScore, ewma } from "../policy/cluster_metrics/adaptive";
import { PickWindow, SampleRing } from "../policy/cluster_metrics/samples";
import { ServiceBoard } from "../policy/cluster_metrics/board";

class Parsed { constructor(public s: ClusterMetricsSettings, public errors: ConfigErrors) {} }

function parse(json: string): Parsed {
  const v = parseJsonString(json).value;
  const errors = new ConfigErrors();
  return new Parsed(parseClusterMetricsSettings(new ConfigReader(v, "lb_config", errors)), errors);
}

function firstError(json: string): string {
  const p = parse(json);
  expect(p.errors.ok).toBe(false, "expected an error for " + json);
  return p.errors.first();
}

function settings(mode: string, n: i32, extra: string = ""): ClusterMetricsSettings {
  const names = new Array<string>();
  for (let i = 0; i < n; i++) names.push("\"s" + i.toString() + "\"");
  const p = parse("{\"mode\":\"" + mode + "\",\"service_list\":[" + names.join(",") + "]" + extra + "}");
  expect(p.errors.ok).toBe(true, p.errors.first());
  return p.s;
}

describe("cluster_metrics settings", () => {
  it("Higress's defaults", () => {
    const s = parse("{\"mode\":\"AdaptiveScore\",\"service_list\":[\"a\",\"b\"]}").s;
    expect(s.mode).toBe(MODE_ADAPTIVE_SCORE);
    expect(s.clusterHeader).toBe("x-higress-target-cluster");
    expect(s.rateLimit).toBe(1.0);
    expect(s.queueSize).toBe(100);
    expect(s.ewmaBeta).toBe(0.5);
    expect(s.p2cChoices).toBe(2);
    expect(s.ttftWeight).toBe(0.7);
    expect(s.totalLatencyWeight).toBe(0.3);
    expect(s.errorPenalty).toBe(3.0);
    expect(s.failureCooldownMs).toBe(30000);
    expect(s.globalInflight).toBe(false);
    expect(s.globalKeyPrefix).toBe("higress:adaptive_score_inflight");
    expect(s.globalTimeoutMs).toBe(3000);
    expect(s.globalKeyTtlSeconds).toBe(1800);
  });

  it("0 means the default where Higress reads it so, except failure_cooldown_ms (0 = off)", () => {
    const s = parse("{\"mode\":\"LeastBusy\",\"service_list\":[\"a\"],\"queue_size\":0,\"p2c_choices\":0,\"global_inflight_timeout\":\"0\",\"global_inflight_key_ttl\":0,\"failure_cooldown_ms\":0,\"cluster_header\":\"\"}").s;
    expect(s.queueSize).toBe(100);
    expect(s.p2cChoices).toBe(2);
    expect(s.globalTimeoutMs).toBe(3000);
    expect(s.globalKeyTtlSeconds).toBe(1800);
    expect(s.failureCooldownMs).toBe(0);
    expect(s.clusterHeader).toBe("x-higress-target-cluster");
  });

  it("modes are case-sensitive; a missing mode is LeastBusy", () => {
    expect(parseMode("LeastBusy")).toBe(MODE_LEAST_BUSY);
    expect(parseMode("LeastTotalLatency")).toBe(MODE_LEAST_TOTAL_LATENCY);
    expect(parseMode("LeastFirstTokenLatency")).toBe(MODE_LEAST_FIRST_TOKEN_LATENCY);
    expect(parseMode("AdaptiveScore")).toBe(MODE_ADAPTIVE_SCORE);
    expect(parseMode("leastbusy")).toBe(-1);
    expect(parse("{\"service_list\":[\"a\"]}").s.mode).toBe(MODE_LEAST_BUSY);
  });

  it("refuses what Higress silently misreads, naming the key", () => {
    expect(firstError("{\"mode\":\"LeastBusyy\",\"service_list\":[\"a\"]}")).toBe("lb_config.mode must be one of LeastBusy, LeastTotalLatency, LeastFirstTokenLatency, AdaptiveScore (case-sensitive), got 'LeastBusyy'");
    expect(firstError("{\"mode\":\"LeastBusy\"}")).toBe("lb_config.service_list must be a non-empty list of cluster names");
    expect(firstError("{\"service_list\":[\"a\",\"a\"]}")).toBe("lb_config.service_list[1] repeats 'a'");
    expect(firstError("{\"service_list\":[\"a\"],\"rate_limit\":1.7}")).toBe("lb_config.rate_limit must be a number in [0.0, 1.0], got 1.7");
    expect(firstError("{\"service_list\":[\"a\"],\"rate_limit\":0}")).toBe("lb_config.rate_limit must be in (0, 1] (1 = no limit), got 0");
    expect(firstError("{\"service_list\":[\"a\"],\"ewma_beta\":1.5}")).toBe("lb_config.ewma_beta must be a number in [0.0, 1.0], got 1.5");
    expect(firstError("{\"service_list\":[\"a\"],\"queue_size\":-1}")).toBe("lb_config.queue_size must be an integer in [0, 100000], got -1");
    expect(firstError("{\"service_list\":[\"a\"],\"ttft_weight\":0,\"total_latency_weight\":0}")).toBe("lb_config.ttft_weight must be > 0 when total_latency_weight is 0, got 0");
    expect(firstError("{\"service_list\":[\"a\"],\"error_penalty\":-1}")).toBe("lb_config.error_penalty must be a number in [0.0, 1000000000.0], got -1");
    expect(firstError("{\"service_list\":[\"a\"],\"failure_cooldown_ms\":-5}")).toBe("lb_config.failure_cooldown_ms must be an integer in [0, 86400000] (milliseconds), got -5");
    expect(firstError("{\"service_list\":[\"a\"],\"metrics_missing_policy\":\"random\"}")).toBe("lb_config.metrics_missing_policy must be one of least_busy, got 'random'");
    expect(firstError("{\"service_list\":[\"a\"],\"global_inflight_enabled\":true}")).toBe("lb_config.serviceFQDN and servicePort are required when global_inflight_enabled is true");
  });
});

describe("AdaptiveScore math", () => {
  it("EWMA: the first sample sets it, then beta*old + (1-beta)*sample", () => {
    expect(ewma(0, 100, 0.5, false)).toBe(100);
    expect(ewma(100, 200, 0.5, true)).toBe(150);
    expect(ewma(100, 200, 0.25, true)).toBe(175);
    const st = new AdaptiveState();
    st.recordTtft(40, 0.5);
    st.recordTtft(80, 0.5);
    expect(st.ewmaTtft).toBe(60);
  });

  it("score = in-flight alone without samples, else the latency and error formula", () => {
    const w = new ScoreWeights(0.7, 0.3, 3.0);
    const st = new AdaptiveState();
    expect(adaptiveScore(st, 2, 0, w)).toBe(3);
    st.recordTtft(99, 0.5); // TTFT 99, total missing -> takes TTFT's value
    expect(adaptiveScore(st, 0, 0, w)).toBeCloseTo((0.7 * 10 + 0.3 * 10) * 1);
    st.recordTotal(399, 0.5, false, 0, 30000); // total 399: sqrt(400) = 20
    expect(adaptiveScore(st, 1, 0, w)).toBeCloseTo((0.7 * 10 + 0.3 * 20) * 2);
    st.recordTotal(399, 0.5, true, 1000, 30000); // 1 error of 2 -> x(1 + 3*0.5); cooling: + (1+1)
    expect(adaptiveScore(st, 1, 2000, w)).toBeCloseTo((0.7 * 10 + 0.3 * 20) * (2 + 2) * 2.5);
    expect(adaptiveScore(st, 1, 31000, w)).toBeCloseTo((0.7 * 10 + 0.3 * 20) * 2 * 2.5);
  });

  it("failure_cooldown_ms 0 disables the cooldown; a success resets consecutive errors", () => {
    const st = new AdaptiveState();
    st.recordTotal(10, 0.5, true, 0, 0);
    expect(st.coolingDown(1)).toBe(false);
    expect(st.consecutiveErrors).toBe(1);
    st.recordTotal(10, 0.5, false, 0, 0);
    expect(st.consecutiveErrors).toBe(0);
  });
});

describe("samples and the pick window", () => {
  it("SampleRing keeps the mean of the last N", () => {
    const r = new SampleRing(3);
    expect(r.mean()).toBe(0);
    r.push(1); r.push(2); r.push(3); r.push(10);
    expect(r.size).toBe(3);
    expect(r.mean()).toBe(5);
  });
  it("PickWindow shares over the last N picks", () => {
    const w = new PickWindow(4, 2);
    expect(w.share(0)).toBe(0);
    w.record(0); w.record(0); w.record(0); w.record(1);
    expect(w.share(0)).toBe(0.75);
    w.record(1); w.record(1);
    expect(w.share(0)).toBe(0.25);
    w.record(7); // ignored
    expect(w.share(1)).toBe(0.75);
  });
});

describe("selection", () => {
  it("LeastBusy: fewest in flight, ties at random (both tied services get picked)", () => {
    const b = new ServiceBoard(settings("LeastBusy", 3));
    const rng = new Xorshift(7);
    b.onPicked(0); b.onPicked(0); b.onPicked(1);
    expect(b.select(0, rng)).toBe(2);
    b.onPicked(2);
    const seen = new Array<i32>(3).fill(0);
    for (let i = 0; i < 200; i++) seen[b.select(0, rng)]++;
    expect(seen[0]).toBe(0);
    expect(seen[1] > 50 && seen[2] > 50).toBe(true);
  });

  it("rate_limit 1 never skips a service that took every request (Higress switches away)", () => {
    const b = new ServiceBoard(settings("LeastBusy", 2));
    const rng = new Xorshift(3);
    b.onPicked(0); b.onEnded(0, 5, 1, 0);
    b.onPicked(1); b.onPicked(1);
    expect(b.select(0, rng)).toBe(0);
  });

  it("rate_limit < 1 skips a service over its share of the last picks", () => {
    const b = new ServiceBoard(settings("LeastBusy", 2, ",\"rate_limit\":0.6"));
    const rng = new Xorshift(3);
    for (let i = 0; i < 4; i++) { b.onPicked(0); b.onEnded(0, 5, 1, 0); }
    b.onPicked(1); b.onPicked(1); // service 1 busier, but 0 has 4/6 > 0.6 of the picks
    expect(b.select(0, rng)).toBe(1);
  });

  it("latency modes: lowest mean, unsampled first; failures doubled against the worst mean", () => {
    const b = new ServiceBoard(settings("LeastTotalLatency", 2));
    const rng = new Xorshift(5);
    expect(b.select(0, rng) >= 0).toBe(true);
    b.onPicked(0); b.onEnded(0, 100, 1, 0);
    expect(b.select(0, rng)).toBe(1); // unsampled (mean 0) first
    b.onPicked(1); b.onEnded(1, 50, -1, 0); // failed: max(50, 100) * 2 = 200
    expect(b.stats[1].total.mean()).toBe(200);
    expect(b.select(0, rng)).toBe(0);
    const t = new ServiceBoard(settings("LeastFirstTokenLatency", 2));
    t.onFirstToken(0, 30, false); t.onFirstToken(1, 20, false);
    expect(t.select(0, rng)).toBe(1);
    t.onEnded(1, 999, 0, 0); // no verdict: no sample
    expect(t.stats[1].total.size).toBe(0);
  });

  it("AdaptiveScore: avoids a cooling service, samples p2c distinct candidates", () => {
    const b = new ServiceBoard(settings("AdaptiveScore", 3, ",\"p2c_choices\":3"));
    const rng = new Xorshift(11);
    b.onPicked(0); b.onEnded(0, 10, -1, 1000);
    for (let i = 0; i < 50; i++) expect(b.select(2000, rng)).not.toBe(0);
    const c = new ServiceBoard(settings("AdaptiveScore", 5)).adaptiveCandidates(0, rng);
    expect(c.length).toBe(2);
    expect(c[0].index).not.toBe(c[1].index);
  });
});
