// Prometheus text for GET /metrics, in vLLM's current format or SGLang's.
// Inputs: an engine snapshot, the served model name, the flavor, and test overrides
// (metric name -> value: replaces the value of every sample of that metric, or adds a gauge with
// the standard labels when the simulator does not print it, e.g. the legacy
// vllm:gpu_cache_usage_perc). Latency histograms are in SIMULATED seconds (see engine.ts).
// Labels are printed sorted with `le` last; values as Python floats (`8.0`), as vLLM does.
// Never fails.
import type { EngineSnapshot } from "./engine.js";
import type { Histogram } from "./stats.js";

export type MetricsFlavor = "vllm" | "sglang";
export type MetricType = "gauge" | "counter" | "histogram";

export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: MetricType;
  samples: MetricSample[];
}

export interface MetricsRenderOptions {
  flavor: MetricsFlavor;
  modelName: string;
  overrides?: Readonly<Record<string, number>>;
  /** LoRA adapters are configured (vllm:lora_requests_info is printed). */
  loraEnabled?: boolean;
}

function scalar(name: string, help: string, type: MetricType, labels: Record<string, string>, value: number): MetricFamily {
  return { name, help, type, samples: [{ name, labels, value }] };
}

function histogram(name: string, help: string, labels: Record<string, string>, h: Histogram): MetricFamily {
  const cumulative = h.cumulative();
  const samples: MetricSample[] = h.bounds.map((bound, i) => ({
    name: `${name}_bucket`,
    labels: { ...labels, le: formatValue(bound) },
    value: cumulative[i],
  }));
  samples.push({ name: `${name}_bucket`, labels: { ...labels, le: "+Inf" }, value: h.count });
  samples.push({ name: `${name}_count`, labels, value: h.count });
  samples.push({ name: `${name}_sum`, labels, value: h.sum });
  return { name, help, type: "histogram", samples };
}

export function baseLabels(flavor: MetricsFlavor, modelName: string): Record<string, string> {
  return flavor === "vllm" ? { engine: "0", model_name: modelName } : { model_name: modelName };
}

function vllmFamilies(s: EngineSnapshot, modelName: string): MetricFamily[] {
  const labels = baseLabels("vllm", modelName);
  const st = s.stats;
  const families: MetricFamily[] = [
    scalar("vllm:num_requests_running", "Number of requests in model execution batches.", "gauge", labels, s.running),
    scalar("vllm:num_requests_waiting", "Number of requests waiting to be processed.", "gauge", labels, s.waiting),
    scalar("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", "gauge", labels, s.kvUsage),
    scalar("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", "counter", labels, s.prefixQueriedTokens),
    scalar("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", "counter", labels, s.prefixHitTokens),
    scalar("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", "counter", labels, st.preemptions),
    scalar("vllm:prompt_tokens_total", "Number of prefill tokens processed.", "counter", labels, st.promptTokens),
    scalar("vllm:generation_tokens_total", "Number of generation tokens processed.", "counter", labels, st.generationTokens),
    {
      name: "vllm:request_success_total",
      help: "Count of successfully processed requests.",
      type: "counter",
      samples: (["stop", "length", "abort"] as const).map((reason) => ({
        name: "vllm:request_success_total",
        labels: { ...labels, finished_reason: reason },
        value: st.finished[reason],
      })),
    },
    histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", labels, st.ttft),
    histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", labels, st.itl),
    histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", labels, st.e2e),
    scalar(
      "vllm:cache_config_info",
      "Information of the LLMEngine CacheConfig",
      "gauge",
      { block_size: String(s.blockSize), enable_prefix_caching: "True", engine: "0", num_gpu_blocks: String(s.numGpuBlocks) },
      1,
    ),
  ];
  return families;
}

function loraFamily(s: EngineSnapshot): MetricFamily {
  return scalar(
    "vllm:lora_requests_info",
    "Running stats on lora requests.",
    "gauge",
    {
      max_lora: String(s.maxLoras),
      running_lora_adapters: s.runningLoras.join(","),
      waiting_lora_adapters: s.waitingLoras.join(","),
    },
    s.loraInfoChangedAtSec,
  );
}

function sglangFamilies(s: EngineSnapshot, modelName: string): MetricFamily[] {
  const labels = baseLabels("sglang", modelName);
  const st = s.stats;
  const maxTokens = s.numGpuBlocks * s.blockSize;
  const hitRate = s.prefixQueriedTokens > 0 ? s.prefixHitTokens / s.prefixQueriedTokens : 0;
  const requests = st.finished.stop + st.finished.length + st.finished.abort;
  return [
    scalar("sglang:num_running_reqs", "The number of running requests.", "gauge", labels, s.running),
    scalar("sglang:num_queue_reqs", "The number of requests in the waiting queue.", "gauge", labels, s.waiting),
    scalar("sglang:num_used_tokens", "The number of used tokens.", "gauge", labels, s.usedTokens),
    scalar("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", "gauge", labels, maxTokens),
    scalar("sglang:token_usage", "The token usage.", "gauge", labels, s.kvUsage),
    scalar("sglang:cache_hit_rate", "The prefix cache hit rate.", "gauge", labels, hitRate),
    scalar("sglang:prompt_tokens_total", "Number of prefill tokens processed.", "counter", labels, st.promptTokens),
    scalar("sglang:generation_tokens_total", "Number of generation tokens processed.", "counter", labels, st.generationTokens),
    scalar("sglang:num_requests_total", "Number of requests processed.", "counter", labels, requests),
    histogram("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", labels, st.ttft),
    histogram("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", labels, st.itl),
    histogram("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", labels, st.e2e),
    scalar(
      "sglang:cache_config_info",
      "Information of the cache configuration.",
      "gauge",
      { ...labels, num_pages: String(s.numGpuBlocks), page_size: String(s.blockSize) },
      1,
    ),
  ];
}

export function buildMetricFamilies(s: EngineSnapshot, opts: MetricsRenderOptions): MetricFamily[] {
  if (opts.flavor === "sglang") return sglangFamilies(s, opts.modelName);
  const families = vllmFamilies(s, opts.modelName);
  // vLLM prints lora_requests_info only when LoRA is enabled (adapters configured).
  if (opts.loraEnabled) families.push(loraFamily(s));
  return families;
}

/** Replaces every sample value of an overridden metric; unknown names become new gauges. */
export function applyMetricOverrides(
  families: MetricFamily[],
  overrides: Readonly<Record<string, number>>,
  labels: Record<string, string>,
): MetricFamily[] {
  for (const [name, value] of Object.entries(overrides)) {
    const family = families.find((f) => f.name === name);
    if (family) {
      if (family.type !== "histogram") for (const sample of family.samples) sample.value = value;
    } else {
      families.push(scalar(name, "Overridden by the simulator control API.", "gauge", labels, value));
    }
  }
  return families;
}

/** Python-float style: integers get `.0`. */
export function formatValue(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? "+Inf" : value < 0 ? "-Inf" : "NaN";
  return Number.isInteger(value) && Math.abs(value) < 1e16 ? value.toFixed(1) : String(value);
}

function formatLabels(labels: Record<string, string>): string {
  const keys = Object.keys(labels).filter((k) => k !== "le").sort();
  if ("le" in labels) keys.push("le");
  if (keys.length === 0) return "";
  const escape = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
  return `{${keys.map((k) => `${k}="${escape(labels[k])}"`).join(",")}}`;
}

export function formatPrometheus(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${family.help}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) lines.push(`${sample.name}${formatLabels(sample.labels)} ${formatValue(sample.value)}`);
  }
  return lines.join("\n") + "\n";
}

export function renderMetrics(s: EngineSnapshot, opts: MetricsRenderOptions): string {
  const families = buildMetricFamilies(s, opts);
  if (opts.overrides) applyMetricOverrides(families, opts.overrides, baseLabels(opts.flavor, opts.modelName));
  return formatPrometheus(families);
}
