// The Redis reads a policy makes before its pick (predicted_latency: prefix levels and the
// candidates' counts; endpoint_metrics with the weighted prefix scorer: prefix levels) wait at most
// pickDeadlineMs, as the lease call does: with Redis frozen (SIGSTOP) a request is picked
// (by the local fallback) within about the deadline, not after the Redis op timeout (1 s here).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import { startLocalStack, redisLbConfig, METRICS_CLUSTER, type LocalStack } from "../../host-test/local-stack.js";

const stacks: LocalStack[] = [];
let slo: LocalStack;
let metrics: LocalStack;
beforeAll(async () => {
  const fleet = { profile: "tiny", timeScale: 10 };
  slo = await startLocalStack({
    pods: 2, workers: 1, healthCheckMs: 200, fleet,
    plugin: (port) => ({ lb_policy: "predicted_latency", lb_config: { ...redisLbConfig(port), debugHeader: "x-llmlb-debug" } }),
  });
  stacks.push(slo);
  metrics = await startLocalStack({
    pods: 2, workers: 1, healthCheckMs: 0, fleet,
    plugin: (port) => ({ lb_policy: "endpoint_metrics", lb_config: { ...redisLbConfig(port), metricsSource: "poll", metricsCluster: METRICS_CLUSTER, scrapeIntervalMs: 100, scoring: "weighted", prefixWeight: 3, debugHeader: "x-llmlb-debug" } }),
  });
  stacks.push(metrics);
}, 60_000);
afterAll(async () => { for (const s of stacks) await s.close(); });

/** A chat through the stack's gateway; resolves with its status and debug header at the end. */
function chat(stack: LocalStack): Promise<{ status: number; debug: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${stack.gateways[0].url}/v1/chat/completions`, { method: "POST", agent: false, headers: { "content-type": "application/json" } }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, debug: String(res.headers["x-llmlb-debug"] ?? "") }));
    });
    req.on("error", reject);
    req.end(JSON.stringify({ model: "sim-tiny", messages: [{ role: "system", content: "a shared system prompt" }, { role: "user", content: "hello" }], max_tokens: 2, stream: true }));
  });
}

describe("reads before a pick, Redis frozen", () => {
  for (const [name, stack] of [["predicted_latency", () => slo], ["endpoint_metrics (weighted, prefix reads)", () => metrics]] as const) {
    it(`${name}: a request is picked within the pick deadline, not the op timeout`, async () => {
      const s = stack();
      for (let i = 0; i < 3; i++) expect((await chat(s)).status).toBe(200); // scripts loaded, metrics scraped
      s.redis.pause();
      try {
        const t0 = Date.now();
        const answer = await chat(s);
        expect(answer.status).toBe(200);
        expect(Date.now() - t0).toBeLessThan(600);
      } finally {
        s.redis.resume();
      }
    }, 30_000);
  }
});
