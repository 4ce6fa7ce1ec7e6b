// Set-up for endpoint_metrics tests through the host facade: vLLM-shaped metrics bodies, hosts
// carrying them (Higress's health-check `metrics`), and a POST chat request driven to its end.
import { expect } from "vitest";
import { TestHost, type HostSpec, type TestHostOptions } from "../../host-test/facade/index.js";

export const WASM = "build/ai-load-balancer.wasm";
/** The Redis cluster the configurations name (serviceFQDN redis.static, port 6379). */
export const REDIS_CLUSTER = "outbound|6379||redis.static";
export const CLUSTER = "outbound|8000||vllm.static";
export const METRICS_CLUSTER = "llm-metrics-original-dst";
export const A = "10.0.0.1:8000";
export const B = "10.0.0.2:8000";
export const C = "10.0.0.3:8000";

/** A minimal vLLM V1 /metrics body. */
export function vllmBody(waiting: number, running = 0, kv = 0.1, lora?: { running: string[]; max: number }): string {
  let t = "# TYPE vllm:num_requests_running gauge\n" +
    `vllm:num_requests_running{engine="0",model_name="m"} ${running.toFixed(1)}\n` +
    "# TYPE vllm:num_requests_waiting gauge\n" +
    `vllm:num_requests_waiting{engine="0",model_name="m"} ${waiting.toFixed(1)}\n` +
    `vllm:kv_cache_usage_perc{engine="0",model_name="m"} ${kv}\n`;
  if (lora) t += `vllm:lora_requests_info{max_lora="${lora.max}",running_lora_adapters="${lora.running.join(",")}",waiting_lora_adapters=""} 1.7e9\n`;
  return t;
}

export function metricsConfig(lbConfig: Record<string, unknown> = {}): object {
  return { lb_policy: "endpoint_metrics", lb_config: { debugHeader: "x-llmlb-debug", ...lbConfig } };
}

export async function makeHost(configuration: object, hosts: HostSpec[], extra: Partial<TestHostOptions> = {}): Promise<TestHost> {
  const h = await TestHost.create({ wasm: WASM, configuration, clusters: { [CLUSTER]: hosts, [METRICS_CLUSTER]: [] }, redisClusters: [REDIS_CLUSTER], logLevel: "warn", ...extra });
  expect(h.configured.every(Boolean)).toBe(true);
  return h;
}

export function chat(h: TestHost, opts: { model?: string; headers?: Record<string, string>; vm?: number; route?: string } = {}) {
  const s = h.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route: opts.route ?? "llm", vm: opts.vm,
    headers: { "content-type": "application/json", ...(opts.headers ?? {}) } });
  s.sendRequestHeaders(false);
  s.sendRequestBody(JSON.stringify({ model: opts.model ?? "m", messages: [{ role: "user", content: "hi" }] }), true);
  return s;
}

/** The host the plugin asked Envoy for, or null. */
export const picked = (s: ReturnType<typeof chat>) => s.overrideHost.requested;
