// Failure injection and metrics overrides, through SimControl and POST /sim/control.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSimPod, type SimPod } from "../../host-test/sim/server.js";
import { fetchMetrics, metricValue } from "./sse.js";

let pod: SimPod;
beforeAll(async () => {
  pod = await startSimPod({ name: "pod-f", profile: "tiny" });
});
afterAll(() => pod.close());
afterEach(() => pod.control.reset());

const completion = (headers: Record<string, string> = {}, extra: object = {}) =>
  fetch(`${pod.url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ prompt: "a b c d", max_tokens: 8, ignore_eos: true, ...extra }),
  });

const controlPost = (body: unknown) =>
  fetch(`${pod.url}/sim/control`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("failure injection", () => {
  it("errorRate 1 answers 500 at once; 0 restores service", async () => {
    const promptTokensBefore = pod.engine.stats.promptTokens;
    expect((await controlPost({ errorRate: 1 })).status).toBe(200);
    const failed = await completion();
    expect(failed.status).toBe(500);
    expect((await failed.json()).error.code).toBe(500);
    expect(pod.engine.stats.promptTokens).toBe(promptTokensBefore); // never reached the engine
    await controlPost({ errorRate: 0 });
    expect((await completion()).status).toBe(200);
  });

  it("x-sim-status forces a status for one request", async () => {
    const forced = await completion({ "x-sim-status": "503" });
    expect(forced.status).toBe(503);
    expect(forced.headers.get("x-sim-pod")).toBe("pod-f");
    expect((await forced.json()).error.type).toBe("ServiceUnavailableError");
    expect((await completion()).status).toBe(200);
  });

  it("resets the connection mid-stream after K tokens and frees the request", async () => {
    pod.control.setResetAfterTokens(3);
    const response = await completion({}, { stream: true, max_tokens: 50 });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let text = "";
    const decoder = new TextDecoder();
    await expect(
      (async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          text += decoder.decode(value);
        }
      })(),
    ).rejects.toThrow();
    expect(text.match(/"text":/g)).toHaveLength(3);
    expect(text).not.toContain("[DONE]");
    await until(() => !pod.engine.hasWork(), "the engine abort");
    expect(pod.engine.pool.usage()).toBe(0);
  });

  it("x-sim-reset-after resets a non-streaming request too", async () => {
    await expect(completion({ "x-sim-reset-after": "2" }).then((r) => r.json())).rejects.toThrow();
    await until(() => !pod.engine.hasWork(), "the engine abort");
  });

  it("slowFactor stretches simulated step time", async () => {
    await controlPost({ slowFactor: 4 });
    expect(pod.engine.slowFactor).toBe(4);
    const slowDone = new Promise<number>((resolve) => pod.engine.once("requestDone", (r) => resolve(r.e2eMs)));
    await completion({}, { max_tokens: 20 });
    const slowE2e = await slowDone;
    await controlPost({ slowFactor: 1 });
    const fastDone = new Promise<number>((resolve) => pod.engine.once("requestDone", (r) => resolve(r.e2eMs)));
    await completion({}, { max_tokens: 20 });
    expect(slowE2e).toBeGreaterThan((await fastDone) * 2);
  });

  it("refuses connections while keeping engine state, then accepts again on the same port", async () => {
    await completion();
    const queriesBefore = pod.engine.pool.queriedTokens;
    await pod.control.refuseConnections();
    expect(pod.control.state().refusingConnections).toBe(true);
    await expect(completion()).rejects.toThrow();
    await pod.control.acceptConnections();
    expect((await completion()).status).toBe(200);
    expect(pod.engine.pool.queriedTokens).toBeGreaterThan(queriesBefore);
  });

  it("refuseForMs via HTTP reopens by itself", async () => {
    await controlPost({ refuseForMs: 100 });
    await expect(fetch(`${pod.url}/health`)).rejects.toThrow();
    await until(() => !pod.control.state().refusingConnections, "the listener to reopen");
    expect((await fetch(`${pod.url}/health`)).status).toBe(200);
  });
});

describe("metrics overrides", () => {
  it("replace gauge values, add absent gauges, and can be removed", async () => {
    const set = await controlPost({ metrics: { "vllm:num_requests_waiting": 30, "vllm:gpu_cache_usage_perc": 0.75 } });
    expect((await set.json()).metricsOverrides).toEqual({ "vllm:num_requests_waiting": 30, "vllm:gpu_cache_usage_perc": 0.75 });
    let text = await fetchMetrics(pod.url);
    expect(metricValue(text, "vllm:num_requests_waiting")).toBe(30);
    expect(text).toContain('vllm:gpu_cache_usage_perc{engine="0",model_name="sim-tiny"} 0.75\n');
    await controlPost({ metrics: { "vllm:num_requests_waiting": null } });
    text = await fetchMetrics(pod.url);
    expect(metricValue(text, "vllm:num_requests_waiting")).toBe(0);
    expect(metricValue(text, "vllm:gpu_cache_usage_perc")).toBe(0.75);
    await controlPost({ metrics: null });
    expect(metricValue(await fetchMetrics(pod.url), "vllm:gpu_cache_usage_perc")).toBeNull();
  });

  it("rejects invalid control input with a message naming the field", async () => {
    const bad = await controlPost({ errorRate: 1.7 });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toBe("errorRate must be in [0, 1], got 1.7");
    expect((await controlPost({ metrics: { x: "high" } })).status).toBe(400);
    expect(pod.control.state().errorRate).toBe(0);
  });
});
