// bench/slo/ttft-bound.ts: the replay of a pod's steps. Told everything (the API overheads, the
// requests sent after), on an engine without jitter, it must give every request the TTFT the
// engine gave it; told only what the pick knows, it must not.
import { describe, expect, it } from "vitest";
import { SimEngine } from "../../host-test/sim/engine.js";
import { resolveProfile } from "../../host-test/sim/profiles.js";
import { SeededRandom } from "../../host-test/sim/random.js";
import { EventClock } from "../../bench/virtual/event-clock.js";
import { replayTtft, type ReplayPod, type ReplayRequest } from "../../bench/slo/ttft-bound.js";

// No jitter, a batch budget no prompt reaches (no chunks), KV for everything, 3 batch slots (requests wait for one).
const PROFILE = resolveProfile("tiny", { jitter: 0, maxNumSeqs: 3, maxNumBatchedTokens: 100_000, numGpuBlocks: 4096 });
const OVERHEAD: [number, number] = [0.5, 3];

/** Prompt tokens each request found cached (runPod's requests, in completion order). */
const cachedTokens: number[] = [];

/** A pod's run: Poisson arrivals, shared system prompts (some cached), random overheads and lengths. */
function runPod(seed: number, n: number): ReplayPod {
  const rng = new SeededRandom(seed);
  const clock = new EventClock();
  const engine = new SimEngine({ profile: PROFILE, mode: "virtual", clock, seed });
  const system = [0, 1].map((s) => Array.from({ length: 150 }, (_, i) => `sys${s}_${i}`));
  const requests: ReplayRequest[] = [];
  let at = 0;
  for (let k = 0; k < n; k++) {
    at += -Math.log(1 - rng.next()) * 6;
    const prompt = [...system[rng.int(2)], ...Array.from({ length: 10 + rng.int(300) }, (_, i) => `r${k}_${i}`)];
    const maxTokens = 1 + rng.int(25);
    const overhead = rng.uniform(OVERHEAD[0], OVERHEAD[1]);
    clock.at(at, () => {
      const sim = engine.submit({ promptTokens: prompt, maxTokens, ignoreEos: true, apiOverheadMs: overhead });
      const r: ReplayRequest = { start: sim.arrivalMs, sent: sim.arrivalMs, ready: sim.readyAtMs, uncached: 0, tokens: [] };
      sim.on("token", (e) => r.tokens.push(e.atMs));
      sim.on("done", (res) => { r.uncached = res.promptTokens - res.cachedTokens; cachedTokens.push(res.cachedTokens); });
      requests.push(r);
    });
  }
  while (clock.runNext());
  const ends = [...new Set(requests.flatMap((r) => r.tokens))].sort((a, b) => a - b);
  return {
    requests, stepEnds: ends, slowFactor: 1, slots: PROFILE.maxNumSeqs, meanOverheadMs: (OVERHEAD[0] + OVERHEAD[1]) / 2,
    cost: { baseMs: PROFILE.stepBaseMs, msPerPrefillToken: PROFILE.prefillMsPerToken, msPerDecodeSeq: PROFILE.decodeMsPerSeq },
  };
}

const ttft = (r: ReplayRequest) => r.tokens[0] - r.start;

describe("ttft-bound replay", () => {
  const pod = runPod(7, 150);

  it("exercises waits for a slot and cached prefixes", () => {
    expect(pod.requests.every((r) => r.tokens.length > 0)).toBe(true);
    // A shared 150-token system prompt found cached (whole blocks of it: at least 144 tokens).
    expect(cachedTokens.filter((c) => c >= 144).length).toBeGreaterThan(10);
    // Some request's first step began later than the step after its overhead: it waited for a slot or a step.
    const waited = pod.requests.filter((r) => ttft(r) > (r.ready - r.sent) + 3 * PROFILE.stepBaseMs);
    expect(waited.length).toBeGreaterThan(5);
  });

  it("told everything, gives every request the engine's TTFT", () => {
    for (const r of pod.requests) {
      expect(replayTtft(pod, r, { readyTimes: true, laterRequests: true })).toBeCloseTo(ttft(r), 6);
    }
  });

  it("told only the pick's knowledge, misses some, and each missing part alone leaves misses", () => {
    const misses = (know: { readyTimes: boolean; laterRequests: boolean }) =>
      pod.requests.filter((r) => Math.abs(replayTtft(pod, r, know) - ttft(r)) > 1e-6).length;
    const none = misses({ readyTimes: false, laterRequests: false });
    const withReady = misses({ readyTimes: true, laterRequests: false });
    const withLater = misses({ readyTimes: false, laterRequests: true });
    expect(withReady).toBeGreaterThan(0);
    expect(withLater).toBeGreaterThan(0);
    expect(none).toBeGreaterThan(Math.max(withReady, withLater));
  });
});
