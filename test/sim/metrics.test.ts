import { describe, expect, it } from "vitest";
import { SimEngine } from "../../host-test/sim/engine.js";
import { formatValue, renderMetrics } from "../../host-test/sim/metrics.js";
import { resolveProfile } from "../../host-test/sim/profiles.js";
import { metricValue } from "./sse.js";

const words = (n: number, prefix = "w") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

function busyEngine(): SimEngine {
  const engine = new SimEngine({ profile: resolveProfile("tiny", { jitter: 0 }), mode: "manual" });
  engine.submit({ promptTokens: words(64), maxTokens: 3, ignoreEos: true });
  engine.runVirtual();
  engine.submit({ promptTokens: words(64), maxTokens: 3, ignoreEos: true });
  engine.step();
  return engine;
}

describe("vLLM /metrics text", () => {
  it("prints HELP/TYPE, sorted labels, python floats and the engine's state", () => {
    const text = renderMetrics(busyEngine().snapshot(), { flavor: "vllm", modelName: "m" });
    expect(text).toContain("# TYPE vllm:num_requests_running gauge\n");
    expect(text).toContain('vllm:num_requests_running{engine="0",model_name="m"} 1.0\n');
    expect(text).toContain('vllm:num_requests_waiting{engine="0",model_name="m"} 0.0\n');
    expect(metricValue(text, "vllm:kv_cache_usage_perc")).toBe(4 / 512);
    expect(metricValue(text, "vllm:prefix_cache_queries_total")).toBe(128);
    expect(metricValue(text, "vllm:prefix_cache_hits_total")).toBe(48);
    expect(text).toContain('vllm:request_success_total{engine="0",finished_reason="length",model_name="m"} 1.0\n');
    expect(text).toContain(
      'vllm:cache_config_info{block_size="16",enable_prefix_caching="True",engine="0",num_gpu_blocks="512"} 1.0\n',
    );
    expect(text).not.toContain("vllm:lora_requests_info");
  });

  it("prints cumulative histogram buckets with le last and +Inf = count", () => {
    const text = renderMetrics(busyEngine().snapshot(), { flavor: "vllm", modelName: "m" });
    const buckets = text.split("\n").filter((l) => l.startsWith("vllm:time_to_first_token_seconds_bucket"));
    expect(buckets[0]).toBe('vllm:time_to_first_token_seconds_bucket{engine="0",model_name="m",le="0.001"} 0.0');
    const counts = buckets.map((l) => Number(l.split(" ")[1]));
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(buckets.at(-1)).toContain('le="+Inf"} 2.0');
    expect(metricValue(text, "vllm:time_to_first_token_seconds_count")).toBe(2);
    expect(metricValue(text, "vllm:time_to_first_token_seconds_sum")).toBeGreaterThan(0);
  });

  it("overrides replace values or add missing gauges; LoRA info when enabled", () => {
    const text = renderMetrics(busyEngine().snapshot(), {
      flavor: "vllm",
      modelName: "m",
      loraEnabled: true,
      overrides: { "vllm:num_requests_waiting": 30, "vllm:gpu_cache_usage_perc": 0.5 },
    });
    expect(text).toContain('vllm:num_requests_waiting{engine="0",model_name="m"} 30.0\n');
    expect(text).toContain('vllm:gpu_cache_usage_perc{engine="0",model_name="m"} 0.5\n');
    expect(text).toMatch(/vllm:lora_requests_info\{max_lora="4",running_lora_adapters="",waiting_lora_adapters=""\} \d+\.\d+/);
  });

  it("formats values like Python floats", () => {
    expect(formatValue(8)).toBe("8.0");
    expect(formatValue(0.25)).toBe("0.25");
    expect(formatValue(Infinity)).toBe("+Inf");
  });
});

describe("SGLang /metrics text", () => {
  it("uses sglang names and the model_name label only", () => {
    const text = renderMetrics(busyEngine().snapshot(), { flavor: "sglang", modelName: "m" });
    expect(text).not.toContain("vllm:");
    expect(text).toContain('sglang:num_running_reqs{model_name="m"} 1.0\n');
    expect(metricValue(text, "sglang:num_queue_reqs")).toBe(0);
    expect(metricValue(text, "sglang:token_usage")).toBe(4 / 512);
    expect(metricValue(text, "sglang:num_used_tokens")).toBe(64);
    expect(metricValue(text, "sglang:max_total_num_tokens")).toBe(8192);
    expect(metricValue(text, "sglang:cache_hit_rate")).toBe(48 / 128);
    expect(text).toContain('sglang:cache_config_info{model_name="m",num_pages="512",page_size="16"} 1.0\n');
  });
});
