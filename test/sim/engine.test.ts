// Engine logic on the virtual clock (manual mode): deterministic, no wall time.
import { describe, expect, it } from "vitest";
import { SimEngine, type StepReport } from "../../host-test/sim/engine.js";
import { resolveProfile, type SimProfile } from "../../host-test/sim/profiles.js";
import type { RequestResult, TokenEvent } from "../../host-test/sim/request.js";
import { chatToPrompt, tokenize } from "../../host-test/sim/tokenizer.js";

const words = (n: number, prefix = "w") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

function manualEngine(overrides: Partial<SimProfile> = {}, profile = "tiny", maxLoras?: number): SimEngine {
  return new SimEngine({ profile: resolveProfile(profile, { jitter: 0, ...overrides }), mode: "manual", maxLoras });
}

function collect(engine: SimEngine): RequestResult[] {
  const results: RequestResult[] = [];
  engine.on("requestDone", (r) => results.push(r));
  return results;
}

function stepAll(engine: SimEngine): StepReport[] {
  const reports: StepReport[] = [];
  for (let report = engine.step(); report; report = engine.step()) reports.push(report);
  return reports;
}

describe("step time", () => {
  it("follows b0 + b1 * prefill_tokens + b2 * decode_seqs", () => {
    const engine = manualEngine();
    engine.submit({ promptTokens: words(100), maxTokens: 3, ignoreEos: true });
    const [prefill, decode1, decode2, none] = [engine.step(), engine.step(), engine.step(), engine.step()];
    expect(prefill).toMatchObject({ prefillTokens: 100, decodeSeqs: 0 });
    expect(prefill!.durationMs).toBeCloseTo(1 + 0.02 * 100, 9);
    expect(decode1).toMatchObject({ prefillTokens: 0, decodeSeqs: 1 });
    expect(decode1!.durationMs).toBeCloseTo(1 + 0.05, 9);
    expect(decode2!.startMs).toBeCloseTo(decode1!.startMs + decode1!.durationMs, 9);
    expect(none).toBeNull();
  });

  it("jitter stays within the profile's band and slowFactor scales steps", () => {
    const engine = new SimEngine({ profile: resolveProfile("tiny", { jitter: 0.1 }), mode: "manual", seed: 7 });
    engine.submit({ promptTokens: words(10), maxTokens: 200, ignoreEos: true });
    const durations = stepAll(engine).slice(1).map((r) => r.durationMs); // decode steps, nominal 1.05
    expect(Math.min(...durations)).toBeGreaterThanOrEqual(1.05 * 0.9);
    expect(Math.max(...durations)).toBeLessThanOrEqual(1.05 * 1.1);
    expect(new Set(durations.map((d) => d.toFixed(6))).size).toBeGreaterThan(50);
    const slow = manualEngine();
    slow.slowFactor = 3;
    slow.submit({ promptTokens: words(100), maxTokens: 1, ignoreEos: true });
    expect(slow.step()!.durationMs).toBeCloseTo(3 * 3, 9);
  });

  it("ITL grows slowly with batch size (llama-8b-h100: ~7 ms at batch 1, ~12 ms at batch 128)", () => {
    const itlAtBatch = (batch: number) => {
      const engine = manualEngine({}, "llama-8b-h100");
      const gaps: number[] = [];
      for (let i = 0; i < batch; i++) {
        const request = engine.submit({ promptTokens: words(32, `p${i}-`), maxTokens: 20, ignoreEos: true });
        let last: number | null = null;
        request.on("token", (t: TokenEvent) => {
          if (last !== null) gaps.push(t.atMs - last);
          last = t.atMs;
        });
      }
      engine.runVirtual();
      return gaps.reduce((a, b) => a + b, 0) / gaps.length;
    };
    const single = itlAtBatch(1);
    const batched = itlAtBatch(128);
    expect(single).toBeCloseTo(7 + 0.04, 6);
    expect(batched).toBeCloseTo(7 + 0.04 * 128, 6);
    expect(batched / single).toBeLessThan(2); // 128x the batch, < 2x the latency
  });
});

describe("continuous batching", () => {
  it("decodes every running request each step, then spends the rest of the budget on prefill chunks", () => {
    const engine = manualEngine(); // budget 256 tokens per step
    const first = engine.submit({ promptTokens: words(20, "a"), maxTokens: 50, ignoreEos: true });
    engine.step();
    const tokensOfFirst: number[] = [];
    first.on("token", (t: TokenEvent) => tokensOfFirst.push(t.index));
    const second = engine.submit({ promptTokens: words(600, "b"), maxTokens: 5, ignoreEos: true });
    const reports = [engine.step()!, engine.step()!, engine.step()!];
    expect(reports.map((r) => [r.decodeSeqs, r.prefillTokens])).toEqual([
      [1, 255],
      [1, 255],
      [1, 90],
    ]);
    expect(tokensOfFirst).toEqual([1, 2, 3]); // no decode stall while a long prompt prefills
    expect(second.firstTokenMs).toBe(reports[2].startMs + reports[2].durationMs);
  });

  it("runs at most maxNumSeqs and queues the rest FCFS; queued requests wait longer", () => {
    const engine = manualEngine(); // maxNumSeqs 8
    const results = collect(engine);
    for (let i = 0; i < 12; i++) engine.submit({ id: `r${i}`, promptTokens: words(16, `q${i}-`), maxTokens: 20, ignoreEos: true });
    engine.step();
    expect(engine.numRunning()).toBe(8);
    expect(engine.numWaiting()).toBe(4);
    engine.runVirtual();
    const ttft = new Map(results.map((r) => [r.id, r.ttftMs!]));
    const firstBatchWorst = Math.max(...[0, 1, 2, 3, 4, 5, 6, 7].map((i) => ttft.get(`r${i}`)!));
    for (const i of [8, 9, 10, 11]) expect(ttft.get(`r${i}`)!).toBeGreaterThan(firstBatchWorst * 5);
  });

  it("queues when the KV pool is full even below maxNumSeqs", () => {
    const engine = manualEngine({ numGpuBlocks: 40 }); // 640 tokens; each request grows to 19 blocks
    const results = collect(engine);
    for (let i = 0; i < 3; i++) engine.submit({ id: `k${i}`, promptTokens: words(300, `k${i}-`), maxTokens: 4, ignoreEos: true });
    for (let i = 0; i < 4; i++) engine.step();
    expect(engine.numRunning()).toBe(2);
    expect(engine.numWaiting()).toBe(1);
    expect(engine.pool.usage()).toBe(38 / 40);
    engine.runVirtual();
    const byId = new Map(results.map((r) => [r.id, r]));
    expect(byId.get("k2")!.ttftMs!).toBeGreaterThan(byId.get("k0")!.e2eMs);
    expect(engine.stats.preemptions).toBe(0);
  });

  it("KV usage rises with load and returns to 0 after, leaving blocks cached", () => {
    const engine = manualEngine();
    for (let i = 0; i < 4; i++) engine.submit({ promptTokens: words(50, `u${i}-`), maxTokens: 10, ignoreEos: true });
    engine.step();
    expect(engine.pool.usage()).toBe((4 * 4) / 512); // 50 tokens -> 4 blocks each
    engine.runVirtual();
    expect(engine.pool.usage()).toBe(0);
    expect(engine.pool.numCachedBlocks()).toBe(4 * 3); // 59 computed tokens -> 3 full blocks each
  });
});

describe("prefix cache", () => {
  it("a repeated prompt reuses cached blocks (capped at length - 1) and its TTFT drops", () => {
    const engine = manualEngine();
    const results = collect(engine);
    const prompt = words(320);
    engine.submit({ promptTokens: prompt, maxTokens: 2, ignoreEos: true });
    engine.runVirtual();
    engine.submit({ promptTokens: prompt, maxTokens: 2, ignoreEos: true });
    engine.runVirtual();
    const [cold, warm] = results;
    expect(cold.cachedTokens).toBe(0);
    expect(warm.cachedTokens).toBe(304); // 319 tokens at most -> 19 full blocks
    expect(warm.ttftMs!).toBeLessThan(cold.ttftMs! / 4);
    expect(engine.pool.queriedTokens).toBe(640);
    expect(engine.pool.hitTokens).toBe(304);
  });

  it("a follow-up turn hits the previous turn's prompt AND output blocks", () => {
    const engine = manualEngine();
    const results = collect(engine);
    const turn1 = [{ role: "system", content: words(50, "sys").join(" ") }, { role: "user", content: "question one" }];
    const prompt1 = tokenize(chatToPrompt(turn1));
    const reply: string[] = [];
    engine.submit({ promptTokens: prompt1, maxTokens: 40, ignoreEos: true }).on("token", (t: TokenEvent) => reply.push(t.text));
    engine.runVirtual();
    const prompt2 = tokenize(chatToPrompt([...turn1, { role: "assistant", content: reply.join(" ") }, { role: "user", content: "two" }]));
    engine.submit({ promptTokens: prompt2, maxTokens: 4, ignoreEos: true });
    engine.runVirtual();
    const computedByTurn1 = prompt1.length + 40 - 1; // the last sampled token is never computed
    expect(results[1].cachedTokens).toBe(Math.floor(computedByTurn1 / 16) * 16);
    expect(results[1].cachedTokens).toBeGreaterThan(Math.floor(prompt1.length / 16) * 16);
  });

  it("LoRA adapters do not share cache with the base model", () => {
    const engine = manualEngine();
    const results = collect(engine);
    engine.submit({ promptTokens: words(64), maxTokens: 1, ignoreEos: true });
    engine.runVirtual();
    engine.submit({ promptTokens: words(64), maxTokens: 1, ignoreEos: true, lora: "adapter-a" });
    engine.runVirtual();
    expect(results[1].cachedTokens).toBe(0);
  });
});

describe("preemption", () => {
  it("preempts the most recently scheduled request when blocks run out; all finish intact", () => {
    const engine = manualEngine({ numGpuBlocks: 24 }); // 384 tokens; each request grows to ~200
    const results = collect(engine);
    const outputs = new Map<string, string[]>();
    for (const id of ["a", "b", "c"]) {
      const r = engine.submit({ id, promptTokens: words(100, `${id}-`), maxTokens: 100, ignoreEos: true });
      outputs.set(id, []);
      r.on("token", (t: TokenEvent) => outputs.get(id)!.push(t.text));
    }
    engine.runVirtual();
    const byId = new Map(results.map((r) => [r.id, r]));
    expect(engine.stats.preemptions).toBeGreaterThan(0);
    expect(byId.get("a")!.preemptions).toBe(0); // the oldest request is never the victim
    expect(byId.get("c")!.preemptions).toBeGreaterThan(0);
    for (const id of ["a", "b", "c"]) {
      expect(byId.get(id)).toMatchObject({ outputTokens: 100, finishReason: "length" });
      expect(outputs.get(id)).toHaveLength(100);
    }
    expect(engine.pool.usage()).toBe(0);
  });
});

describe("request lifecycle", () => {
  it("abort frees the request's blocks and reports finish_reason abort", () => {
    const engine = manualEngine();
    const results = collect(engine);
    const request = engine.submit({ promptTokens: words(200), maxTokens: 1000, ignoreEos: true });
    engine.step();
    engine.step();
    expect(engine.pool.usage()).toBeGreaterThan(0);
    request.abort();
    expect(engine.pool.usage()).toBe(0);
    expect(engine.hasWork()).toBe(false);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ finishReason: "abort", outputTokens: 2 }); // prefill + 1 decode step
    expect(engine.step()).toBeNull();
  });

  it("without ignore_eos: seeded lengths, deterministic per prompt, capped by max_tokens", () => {
    const engine = manualEngine();
    const results = collect(engine);
    for (let i = 0; i < 30; i++) engine.submit({ id: `s${i}`, promptTokens: words(20, `s${i}-`), maxTokens: 40, ignoreEos: false });
    engine.submit({ id: "again", promptTokens: words(20, "s0-"), maxTokens: 40, ignoreEos: false });
    engine.runVirtual();
    const byId = new Map(results.map((r) => [r.id, r]));
    const lengths = results.filter((r) => r.id !== "again").map((r) => r.outputTokens);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(40);
    expect(new Set(lengths).size).toBeGreaterThan(5);
    for (const r of results) expect(r.finishReason).toBe(r.outputTokens === 40 ? "length" : "stop");
    expect(byId.get("again")!.outputTokens).toBe(byId.get("s0")!.outputTokens);
  });

  it("max-loras limits distinct adapters per batch", () => {
    const engine = manualEngine({}, "tiny", 1);
    const results = collect(engine);
    engine.submit({ id: "x", promptTokens: words(16, "x"), maxTokens: 5, ignoreEos: true, lora: "a" });
    engine.submit({ id: "y", promptTokens: words(16, "y"), maxTokens: 5, ignoreEos: true, lora: "b" });
    engine.submit({ id: "z", promptTokens: words(16, "z"), maxTokens: 5, ignoreEos: true, lora: "a" });
    engine.step();
    expect(engine.numRunning()).toBe(2);
    expect(engine.snapshot()).toMatchObject({ runningLoras: ["a"], waitingLoras: ["b"] });
    engine.runVirtual();
    expect(results.map((r) => r.id)).toEqual(["x", "z", "y"]);
  });
});

describe("clocks", () => {
  it("API overhead counts in TTFT; manual mode jumps idle time to the next arrival", () => {
    const engine = manualEngine();
    const results = collect(engine);
    engine.submit({ promptTokens: words(100), maxTokens: 1, ignoreEos: true, apiOverheadMs: 10 });
    const report = engine.step()!;
    expect(report.startMs).toBe(10);
    expect(results[0].ttftMs).toBeCloseTo(10 + 1 + 0.02 * 100, 9);
    engine.advanceClock(1000);
    engine.submit({ promptTokens: words(100, "x"), maxTokens: 1, ignoreEos: true });
    expect(engine.step()!.startMs).toBeCloseTo(report.startMs + report.durationMs + 1000, 9);
  });

  it("a request still in API overhead joins the first step starting after it is ready", () => {
    const engine = manualEngine();
    engine.submit({ promptTokens: words(8, "a"), maxTokens: 30, ignoreEos: true });
    const late = engine.submit({ promptTokens: words(8, "b"), maxTokens: 1, ignoreEos: true, apiOverheadMs: 5 });
    const starts: number[] = [];
    let lateFirstStep: number | null = null;
    for (let report = engine.step(); report; report = engine.step()) {
      starts.push(report.startMs);
      if (lateFirstStep === null && late.status !== "waiting") lateFirstStep = report.startMs;
    }
    expect(lateFirstStep).toBeGreaterThanOrEqual(5);
    expect(starts.filter((s) => s < 5).length).toBeGreaterThan(0); // earlier steps ran without it
    expect(Math.max(...starts.filter((s) => s < lateFirstStep!))).toBeLessThan(5);
  });

  it("realtime mode reports the same simulated latencies as manual mode (event-loop lag does not leak in)", async () => {
    const profile = resolveProfile("tiny", { jitter: 0.05 });
    const manual = new SimEngine({ profile, mode: "manual", seed: 3 });
    const realtime = new SimEngine({ profile, mode: "realtime", seed: 3, timeScale: 20 });
    const spec = { promptTokens: words(700), maxTokens: 30, ignoreEos: true, apiOverheadMs: 4 };
    const manualResult = new Promise<RequestResult>((resolve) => manual.submit(spec).on("done", resolve));
    manual.runVirtual();
    const realtimeResult = new Promise<RequestResult>((resolve) => realtime.submit({ ...spec, arrivalMs: realtime.now() }).on("done", resolve));
    const [m, r] = await Promise.all([manualResult, realtimeResult]);
    expect(r.ttftMs!).toBeCloseTo(m.ttftMs!, 6);
    expect(r.e2eMs).toBeCloseTo(m.e2eMs, 6);
    realtime.close();
  });
});
