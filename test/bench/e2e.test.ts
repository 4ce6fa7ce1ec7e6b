// End to end over real HTTP: the load generator against simulated pods (multi-turn caching,
// failures, bounds), the omniscient picker's choice, and the smoke scenario through the real
// gateway (wasm plugin + real redis-server).
import { afterEach, describe, expect, it } from "vitest";
import { startSimFleet, type SimFleet } from "../../host-test/sim/fleet.js";
import { runLoad } from "../../bench/loadgen.js";
import { OmniscientPicker } from "../../bench/omniscient-picker.js";
import { startPickerProxy } from "../../bench/picker-proxy.js";
import { checkProblems } from "../../bench/report.js";
import { runLoadScenario } from "../../bench/run-scenario.js";
import { smoke } from "../../bench/scenarios/smoke.js";
import { sharedPrefixWorkload } from "../../bench/workloads/shared-prefix.js";
import { chatCompletionBody, conversationMessages } from "../../bench/workloads/chat-request.js";
import { totalTurns } from "../../bench/workloads/types.js";

const TIME_SCALE = 4;
let fleet: SimFleet | null = null;
afterEach(async () => {
  await fleet?.close();
  fleet = null;
});

const multiTurn = (seed: number) => sharedPrefixWorkload("t", {
  num_groups: 2, num_prompts_per_group: 2, system_prompt_len: 64, question_len: 8, output_len: 6,
  enable_multi_turn_chat: true, turns_per_session: 3, followUps: "immediate",
}, seed);

describe("load generator against simulated pods", () => {
  it("measures every turn, grows the conversation, and sees its cache hits", async () => {
    fleet = await startSimFleet(2, { profile: "tiny", timeScale: TIME_SCALE });
    const workload = multiTurn(1);
    const result = await runLoad({
      urls: fleet.pods.map((p) => p.url), workload, load: { mode: "concurrency", concurrency: 2 }, timeScale: TIME_SCALE, seed: 1, maxWallMs: 10_000,
    });
    expect(result.records).toHaveLength(totalTurns(workload));
    expect(result.unsentTurns).toBe(0);
    for (const r of result.records) {
      expect(r.ok).toBe(true);
      expect(r.outputTokens).toBe(6);
      expect(r.itlMs).toHaveLength(5);
      expect(r.ttftMs!).toBeGreaterThan(0);
      expect(r.ttftMs!).toBeLessThanOrEqual(r.e2eMs);
      expect(fleet.pods.map((p) => p.name)).toContain(r.pod);
    }
    // Sessions stick to their gateway (round robin per connection); later turns reuse the cache.
    for (const id of new Set(result.records.map((r) => r.session))) {
      const turns = result.records.filter((r) => r.session === id).sort((a, b) => a.turn - b.turn);
      expect(new Set(turns.map((r) => r.gateway)).size).toBe(1);
      expect(turns[1].promptTokens).toBeGreaterThan(turns[0].promptTokens + 6);
      expect(turns[2].cachedTokens).toBeGreaterThanOrEqual(turns[1].promptTokens - 16);
    }
    expect(result.durationMs).toBeGreaterThan(0);
  });

  it("records failures and abandons the failed sessions' later turns", async () => {
    fleet = await startSimFleet(1, { profile: "tiny", timeScale: TIME_SCALE });
    fleet.pods[0].control.setErrorRate(1);
    const result = await runLoad({
      urls: [fleet.pods[0].url], workload: multiTurn(2), load: { mode: "concurrency", concurrency: 2 }, timeScale: TIME_SCALE, seed: 1, maxWallMs: 10_000,
    });
    expect(result.records).toHaveLength(4);
    expect(result.records.every((r) => !r.ok && r.status === 500 && r.error === "status 500")).toBe(true);
    expect(result.unsentTurns).toBe(8);
  });

  it("open loop stops at maxRequests", async () => {
    fleet = await startSimFleet(1, { profile: "tiny", timeScale: TIME_SCALE });
    const result = await runLoad({
      urls: [fleet.pods[0].url], workload: multiTurn(3),
      load: { mode: "stages", arrivals: "constant", stages: [{ rate: 200, durationMs: 10_000 }] },
      timeScale: TIME_SCALE, seed: 1, maxWallMs: 10_000, maxRequests: 5,
    });
    expect(result.stoppedBy).toBe("maxRequests");
    expect(result.records).toHaveLength(5);
    expect(result.records.every((r) => r.ok)).toBe(true);
  });
});

describe("omniscient picker", () => {
  it("sends a prompt to the pod already holding its prefix, through the proxy", async () => {
    fleet = await startSimFleet(3, { profile: "tiny", timeScale: TIME_SCALE });
    const session = multiTurn(4).sessions[0];
    const body = chatCompletionBody(conversationMessages(session, 0, []), 4);
    // Warm pod-2 directly, then ask the picker (through the proxy) for the same prompt.
    const warm = await fetch(`${fleet.pods[2].url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    await warm.text();
    const proxy = await startPickerProxy(fleet.pods, new OmniscientPicker(fleet.pods));
    try {
      const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      await res.text();
      expect(res.headers.get("x-sim-pod")).toBe("pod-2");
    } finally {
      await proxy.close();
    }
  });
});

describe("smoke scenario", () => {
  it("runs every policy through the real gateway (plugin, Redis) or the proxy without a failure", async () => {
    const report = await runLoadScenario(smoke, { quiet: true });
    expect(checkProblems(report)).toEqual([]);
    const turns = totalTurns(smoke.workload(1));
    for (const run of report.runs) {
      expect(run.summary!.succeeded).toBe(turns);
      expect(run.summary!.kvHitRate).toBeGreaterThan(0.3);
      expect(Object.keys(run.summary!.pods.requests)).toEqual(["pod-0", "pod-1", "pod-2"]);
    }
  });
});
