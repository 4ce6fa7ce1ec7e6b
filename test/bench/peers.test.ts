// The peers' routers as the benchmark runs them (bench/peers/): SGLang's cache_aware rule and
// Dynamo's KV cost, on simulated engines (a virtual fleet of the tiny profile).
import { afterEach, describe, expect, it } from "vitest";
import { DynamoKvPicker } from "../../bench/peers/dynamo-kv-picker.js";
import { routingText, SglangRouterPicker } from "../../bench/peers/sglang-router-picker.js";
import { EventClock } from "../../bench/virtual/event-clock.js";
import { VirtualFleet } from "../../bench/virtual/virtual-fleet.js";
import { promptTokens } from "../../bench/omniscient-picker.js";
import { runVirtualScenario } from "../../bench/virtual/run-virtual.js";
import { smoke } from "../../bench/scenarios/smoke.js";
import { totalTurns } from "../../bench/workloads/types.js";

const words = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(" ");
const chat = (text: string, maxTokens = 8) => ({ messages: [{ role: "user", content: text }], max_tokens: maxTokens });

describe("SGLang router (cache_aware, command-line defaults)", () => {
  it("reads the text a chat or a completion routes by", () => {
    expect(routingText({ messages: [{ role: "system", content: "a b" }, { role: "user", content: [{ type: "text", text: "c" }, { type: "image_url" }] }] })).toBe("a b c");
    expect(routingText({ prompt: "x y" })).toBe("x y");
    expect(routingText({ prompt: ["x", "y"] })).toBe("x y");
    expect(routingText(null)).toBe("");
  });

  it("sends a prompt matching more than 30% of a worker's tree there, and a new one to the smallest tree", () => {
    const p = new SglangRouterPicker(3);
    const first = p.pick(chat(words("sys", 64) + " " + words("q", 16))).pod;
    expect(p.pick(chat(words("sys", 64) + " " + words("other", 16))).pod).toBe(first);
    const fresh = p.pick(chat(words("new", 80))).pod;
    expect(fresh).not.toBe(first);
    // 16 of 80 words shared (20%): at or below the threshold, the smallest tree takes it.
    const low = p.pick(chat(words("sys", 16) + " " + words("z", 64))).pod;
    expect([first, fresh]).not.toContain(low);
  });

  it("goes to the least-loaded worker once max - min > 64 and max > 1.5 x min, whatever the match", () => {
    const p = new SglangRouterPicker(2);
    const hot = words("hot", 48);
    const picks = Array.from({ length: 65 }, () => p.pick(chat(hot)));
    expect(picks.every((x) => x.pod === 0)).toBe(true);
    expect(p.pick(chat(words("new", 48))).pod).toBe(1); // loads 65 / 0: imbalanced
    expect(p.pick(chat(hot)).pod).toBe(0); // 65 / 1: a spread of 64 is not more than 64, the match wins
    expect(p.pick(chat(hot)).pod).toBe(1); // 66 / 1: imbalanced, the least-loaded worker
  });

  it("counts each end once", () => {
    const p = new SglangRouterPicker(2);
    const text = words("hot", 48);
    const first = p.pick(chat(text));
    p.onEnd(first);
    p.onEnd(first);
    for (let i = 0; i < 65; i++) expect(p.pick(chat(text)).pod).toBe(0);
    // 65 / 0 (a second end of the first request would have left 64 / 0, balanced: worker 0 again).
    expect(p.pick(chat(text)).pod).toBe(1);
  });
});

describe("Dynamo KV router (overlap weight 1, temperature 0)", () => {
  let fleet: VirtualFleet | null = null;
  afterEach(() => { fleet?.close(); fleet = null; });

  function runUntilIdle(clock: EventClock): void {
    while (clock.runNext()) { /* drain */ }
  }

  it("sends a prompt to the worker whose KV cache holds its prefix", () => {
    const clock = new EventClock();
    fleet = new VirtualFleet(clock, { pods: 3, profile: "tiny", seed: 1, metricsIntervalMs: 0 });
    const body = chat(words("doc", 200));
    fleet.submit(2, promptTokens(body), 1);
    runUntilIdle(clock);
    expect(new DynamoKvPicker(fleet.pods).pick(body).pod).toBe(2);
  });

  it("weighs what it has routed: a cached prefix loses to an idle worker while a long prefill waits on the cached one", () => {
    const clock = new EventClock();
    fleet = new VirtualFleet(clock, { pods: 2, profile: "tiny", seed: 1, metricsIntervalMs: 0 });
    const body = chat(words("doc", 64));
    fleet.submit(0, promptTokens(body), 1);
    runUntilIdle(clock);
    const p = new DynamoKvPicker(fleet.pods);
    const long = p.pick(chat(words("long", 800)));
    // The cached worker wins unless the long prompt's prefill and blocks sit on it.
    expect(p.pick(body).pod).toBe(1 - long.pod);
    p.onEnd(long);
    expect(p.pick(body).pod).toBe(0);
  });

  it("grows a request's blocks with its generated tokens and frees them all at its end", () => {
    const clock = new EventClock();
    fleet = new VirtualFleet(clock, { pods: 1, profile: "tiny", seed: 1, metricsIntervalMs: 0 });
    const p = new DynamoKvPicker(fleet.pods);
    const pick = p.pick(chat(words("w", 40)));
    const own = () => (p as unknown as { ownBlocks: number[] }).ownBlocks[0];
    const start = own();
    p.onFirstByte(pick);
    for (let i = 0; i < 64; i++) p.onToken(pick);
    expect(own()).toBeGreaterThan(start);
    p.onEnd(pick);
    p.onEnd(pick);
    expect(own()).toBe(0);
    expect((p as unknown as { active: Array<Map<number, number>> }).active[0].size).toBe(0);
  });
});

describe("the peers in a virtual run", () => {
  it("serve the smoke scenario end to end: every request served, none failed", async () => {
    const report = await runVirtualScenario(smoke, { seed: 7, quiet: true, policies: ["sglang_router", "dynamo_kv"] });
    const turns = totalTurns(smoke.workload(7));
    for (const run of report.runs) {
      expect(run.summary, run.policy).toBeDefined();
      expect({ policy: run.policy, failed: run.summary!.failed, ok: run.summary!.succeeded }).toEqual({ policy: run.policy, failed: 0, ok: turns });
    }
  }, 60_000);
});
