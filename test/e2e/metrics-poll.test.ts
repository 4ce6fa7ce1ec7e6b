// endpoint_metrics polling through the local gateway: the plugin scrapes every pod's /metrics
// itself (no health check) through an ORIGINAL_DST cluster, and avoids the pod whose metrics
// report a long queue (set through the simulator's metrics override).
import { afterAll, beforeAll, expect, it } from "vitest";
import http from "node:http";
import { startLocalStack, METRICS_CLUSTER, type LocalStack } from "../../host-test/local-stack.js";

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({
    pods: 3, workers: 2, healthCheckMs: 0, fleet: { profile: "tiny", timeScale: 10 },
    plugin: () => ({ lb_policy: "endpoint_metrics", lb_config: { metricsSource: "poll", metricsCluster: METRICS_CLUSTER, scrapeIntervalMs: 100, debugHeader: "x-llmlb-debug" } }),
  });
}, 30_000);
afterAll(async () => { await stack?.close(); });

function chat(url: string): Promise<{ pod: string; debug: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/v1/chat/completions`, { method: "POST", agent: false, headers: { "content-type": "application/json" } }, (res) => {
      res.resume();
      res.on("end", () => resolve({ pod: String(res.headers["x-sim-pod"]), debug: String(res.headers["x-llmlb-debug"] ?? "") }));
    });
    req.on("error", reject);
    req.end(JSON.stringify({ model: "sim-tiny", messages: [{ role: "user", content: "hi" }], max_tokens: 1 }));
  });
}

it("scrapes each pod through the ORIGINAL_DST cluster and steers away from a pod with a long queue", async () => {
  const busy = stack.fleet.pods[1];
  busy.control.setMetricsOverrides({ "vllm:num_requests_waiting": 40 });
  const url = stack.gateways[0].url;
  await chat(url); // the first request teaches the plugin the pod list; scrapes follow on ticks
  await new Promise((r) => setTimeout(r, 1500));
  const pods = new Set<string>();
  for (let i = 0; i < 20; i++) {
    const r = await chat(url);
    expect(r.debug).toContain("reason=endpoint_metrics:metrics");
    pods.add(r.pod);
  }
  expect(pods.has(busy.name)).toBe(false);
  expect(pods.size).toBe(2);
});
