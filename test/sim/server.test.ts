// The simulated pod over real HTTP: wire formats, usage, caching, queueing, aborts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSimFleet } from "../../host-test/sim/fleet.js";
import type { RequestResult } from "../../host-test/sim/request.js";
import { startSimPod, type SimPod } from "../../host-test/sim/server.js";
import { countTokens } from "../../host-test/sim/tokenizer.js";
import { fetchMetrics, metricValue, readSse } from "./sse.js";

const words = (n: number, prefix = "w") => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(" ");

function post(pod: SimPod, path: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(`${pod.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(init.headers ?? {}) },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: init.signal,
  });
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

let pod: SimPod;
let results: RequestResult[] = [];
beforeAll(async () => {
  pod = await startSimPod({ name: "pod-7", profile: "tiny", loraAdapters: ["sql-lora"] });
  pod.engine.on("requestDone", (r) => results.push(r));
});
afterAll(() => pod.close());
afterEach(() => {
  results = [];
});

describe("OpenAI-compatible streaming", () => {
  it("emits the exact vLLM chat SSE sequence", async () => {
    const response = await post(pod, "/v1/chat/completions", {
      model: "sim-tiny",
      messages: [{ role: "user", content: "count to five" }],
      max_tokens: 5,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(response.headers.get("x-sim-pod")).toBe("pod-7");
    const { payloads, raw } = await readSse(response);
    expect(raw.at(-1)).toBe("[DONE]");
    expect(payloads).toHaveLength(1 + 5 + 1);
    const [role, ...rest] = payloads;
    const tokens = rest.slice(0, 5);
    const usage = rest[5];
    expect(new Set(payloads.map((p) => p.id)).size).toBe(1);
    for (const p of [role, ...tokens]) expect(p).toMatchObject({ object: "chat.completion.chunk", model: "sim-tiny" });
    expect(role.choices).toEqual([{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }]);
    tokens.forEach((chunk, i) => {
      expect(chunk.choices).toHaveLength(1);
      expect(chunk.choices[0].delta).toEqual({ content: expect.stringMatching(i === 0 ? /^tok\d+$/ : /^ tok\d+$/) });
      expect(chunk.choices[0].finish_reason).toBe(i === 4 ? "length" : null);
    });
    expect(countTokens(tokens.map((c) => c.choices[0].delta.content).join(""))).toBe(5);
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toEqual({ prompt_tokens: 6, completion_tokens: 5, total_tokens: 11, prompt_tokens_details: { cached_tokens: 0 } });
  });

  it("emits text_completion chunks for /v1/completions, without usage unless asked", async () => {
    const response = await post(pod, "/v1/completions", { prompt: "once upon a time", max_tokens: 3, ignore_eos: true, stream: true });
    const { payloads, raw } = await readSse(response);
    expect(raw.at(-1)).toBe("[DONE]");
    expect(payloads).toHaveLength(3);
    for (const p of payloads) {
      expect(p.object).toBe("text_completion");
      expect(p.choices[0].text).toMatch(/^ ?tok\d+$/);
      expect(p).not.toHaveProperty("usage");
    }
    expect(payloads[2].choices[0].finish_reason).toBe("length");
  });

  it("streaming and non-streaming agree on text and usage; the repeat hits the prefix cache", async () => {
    const body = { messages: [{ role: "user", content: words(100) }], max_tokens: 60 }; // ignore_eos false: sampled stop
    const streamed = await readSse(await post(pod, "/v1/chat/completions", { ...body, stream: true, stream_options: { include_usage: true } }));
    const full = await (await post(pod, "/v1/chat/completions", body)).json();
    const streamedText = streamed.payloads.flatMap((p) => p.choices.map((c: any) => c.delta.content ?? "")).join("");
    const streamedUsage = streamed.payloads.at(-1).usage;
    const finish = streamed.payloads.flatMap((p) => p.choices).find((c: any) => c.finish_reason)?.finish_reason;
    expect(full.object).toBe("chat.completion");
    expect(full.choices[0].message).toMatchObject({ role: "assistant", content: streamedText });
    expect(full.choices[0].finish_reason).toBe(finish);
    expect(full.choices[0].finish_reason).toBe(streamedUsage.completion_tokens === 60 ? "length" : "stop");
    expect(countTokens(full.choices[0].message.content)).toBe(full.usage.completion_tokens);
    for (const key of ["prompt_tokens", "completion_tokens", "total_tokens"]) expect(full.usage[key]).toBe(streamedUsage[key]);
    expect(streamedUsage.prompt_tokens_details.cached_tokens).toBe(0);
    expect(full.usage.prompt_tokens_details.cached_tokens).toBe(Math.floor((full.usage.prompt_tokens - 1) / 16) * 16);
  });
});

describe("simulated performance over HTTP", () => {
  it("a prefix hit cuts TTFT (simulated time) and shows in cached_tokens and /metrics", async () => {
    const body = { prompt: words(2000, "doc"), max_tokens: 2, ignore_eos: true };
    const hitsBefore = metricValue(await fetchMetrics(pod.url), "vllm:prefix_cache_hits_total")!;
    const cold = await (await post(pod, "/v1/completions", body)).json();
    const warm = await (await post(pod, "/v1/completions", body)).json();
    expect(cold.usage.prompt_tokens_details.cached_tokens).toBe(0);
    expect(warm.usage.prompt_tokens_details.cached_tokens).toBe(1984);
    const [coldResult, warmResult] = results;
    expect(warmResult.ttftMs!).toBeLessThan(coldResult.ttftMs! / 4);
    const hitsAfter = metricValue(await fetchMetrics(pod.url), "vllm:prefix_cache_hits_total")!;
    expect(hitsAfter - hitsBefore).toBe(1984);
  });

  it("past capacity requests queue (waiting > 0 in /metrics), TTFT grows, and KV usage returns to 0", async () => {
    const inFlight = Array.from({ length: 20 }, (_, i) =>
      post(pod, "/v1/completions", { prompt: words(64, `q${i}-`), max_tokens: 40, ignore_eos: true }).then((r) => r.json()),
    );
    let peakWaiting = 0;
    let peakUsage = 0;
    await until(async () => {
      const text = await fetchMetrics(pod.url);
      peakWaiting = Math.max(peakWaiting, metricValue(text, "vllm:num_requests_waiting")!);
      peakUsage = Math.max(peakUsage, metricValue(text, "vllm:kv_cache_usage_perc")!);
      expect(metricValue(text, "vllm:num_requests_running")!).toBeLessThanOrEqual(8);
      return peakWaiting > 0 && peakUsage > 0;
    }, "a queue in /metrics");
    const bodies = await Promise.all(inFlight);
    expect(bodies.every((b) => b.usage.completion_tokens === 40)).toBe(true);
    const ttfts = results.map((r) => r.ttftMs!).sort((a, b) => a - b);
    expect(ttfts[19]).toBeGreaterThan(ttfts[0] * 5); // the queued tail waited for whole requests
    const after = await fetchMetrics(pod.url);
    expect(metricValue(after, "vllm:num_requests_waiting")).toBe(0);
    expect(metricValue(after, "vllm:num_requests_running")).toBe(0);
    expect(metricValue(after, "vllm:kv_cache_usage_perc")).toBe(0);
  });

  it("a client disconnect aborts the request and frees its blocks", async () => {
    const abortsBefore = pod.engine.stats.finished.abort;
    const controller = new AbortController();
    const response = await post(pod, "/v1/chat/completions", {
      messages: [{ role: "user", content: words(300) }],
      max_tokens: 3000,
      ignore_eos: true,
      stream: true,
    }, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    expect(pod.engine.pool.usage()).toBeGreaterThan(0);
    controller.abort();
    await until(() => pod.engine.stats.finished.abort === abortsBefore + 1, "the engine abort");
    expect(pod.engine.pool.usage()).toBe(0);
    expect(pod.engine.hasWork()).toBe(false);
    const text = await fetchMetrics(pod.url);
    expect(metricValue(text, "vllm:request_success_total", 'finished_reason="abort"')).toBe(abortsBefore + 1);
  });
});

describe("models, health, errors", () => {
  it("lists the base model and LoRA adapters, and serves an adapter", async () => {
    const models = await (await fetch(`${pod.url}/v1/models`)).json();
    expect(models.object).toBe("list");
    expect(models.data.map((m: any) => [m.id, m.parent])).toEqual([
      ["sim-tiny", null],
      ["sql-lora", "sim-tiny"],
    ]);
    const reply = await (await post(pod, "/v1/completions", { model: "sql-lora", prompt: "select", max_tokens: 2 })).json();
    expect(reply.model).toBe("sql-lora");
    expect(await fetchMetrics(pod.url)).toContain("vllm:lora_requests_info{");
  });

  it("answers /health, and OpenAI-style errors with x-sim-pod", async () => {
    const health = await fetch(`${pod.url}/health`);
    expect(health.status).toBe(200);
    const badJson = await post(pod, "/v1/chat/completions", "{not json");
    expect(badJson.status).toBe(400);
    expect(badJson.headers.get("x-sim-pod")).toBe("pod-7");
    expect((await badJson.json()).error).toMatchObject({ type: "BadRequestError", code: 400, message: expect.any(String) });
    const noMessages = await post(pod, "/v1/chat/completions", { model: "sim-tiny" });
    expect(noMessages.status).toBe(400);
    const unknownModel = await post(pod, "/v1/completions", { model: "nope", prompt: "x" });
    expect(unknownModel.status).toBe(404);
    const tooLong = await post(pod, "/v1/completions", { prompt: words(4000), max_tokens: 200 });
    expect(tooLong.status).toBe(400);
    expect((await tooLong.json()).error.message).toContain("maximum context length is 4096");
    const nowhere = await fetch(`${pod.url}/v2/else`);
    expect(nowhere.status).toBe(404);
    expect(nowhere.headers.get("x-sim-pod")).toBe("pod-7");
  });
});

describe("fleet", () => {
  it("starts pods named pod-0..n-1 on distinct ports, each answering as itself", async () => {
    const fleet = await startSimFleet(3, { profile: "tiny", flavor: "sglang" });
    try {
      expect(fleet.pods.map((p) => p.name)).toEqual(["pod-0", "pod-1", "pod-2"]);
      expect(new Set(fleet.pods.map((p) => p.port)).size).toBe(3);
      for (const p of fleet.pods) {
        const response = await fetch(`${p.url}/metrics`);
        expect(response.headers.get("x-sim-pod")).toBe(p.name);
        expect(await response.text()).toContain("sglang:num_running_reqs");
      }
    } finally {
      await fleet.close();
    }
  });
});
