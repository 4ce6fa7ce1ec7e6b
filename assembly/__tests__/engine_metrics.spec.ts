// Specs of parseEngineMetrics (assembly/metrics/engine_metrics.ts) and readGauge (gauge.ts) on the
// golden bodies and on small inline bodies for each rule.
import { EngineMetrics, parseEngineMetrics } from "../metrics/engine_metrics";
import { readGauge } from "../metrics/gauge";
import { ADVERSARIAL_METRICS, SGLANG_METRICS, VLLM_OLD_METRICS, VLLM_V0X_METRICS } from "./metrics_fixtures";

const LLAMA = "meta-llama/Llama-3.1-8B-Instruct";

function expectNoLora(m: EngineMetrics): void {
  expect(m.loraSeen).toBe(false);
  expect(m.runningLora).toHaveLength(0);
  expect(m.waitingLora).toHaveLength(0);
  expect(m.maxLora).toBe(0);
}

describe("parseEngineMetrics: golden bodies", () => {
  it("vLLM V1 with two engines and LoRA", () => {
    const m = parseEngineMetrics(VLLM_V0X_METRICS);
    expect(m.engine).toBe("vllm");
    expect(m.valid).toBe(true);
    expect(m.truncated).toBe(false);
    expect(m.running).toBe(8.0); // 5 + 3
    expect(m.waiting).toBe(2.0); // 2 + 0
    expect(m.hasKv).toBe(true);
    expect(m.kvUsage).toBe(0.4375); // max(0.4375, 0.3085...)
    expect(m.loraSeen).toBe(true);
    // The newest series is printed first in the fixture; it must win over the later, older one.
    expect(m.runningLora).toStrictEqual(["sql-lora", "chat-lora"]);
    expect(m.waitingLora).toStrictEqual(["summarize-lora"]);
    expect(m.maxLora).toBe(4);
    expect(m.numGpuBlocks).toBe(29127);
    expect(m.blockSize).toBe(16);
  });

  it("old vLLM: gpu_cache_usage_perc is the KV signal", () => {
    const m = parseEngineMetrics(VLLM_OLD_METRICS);
    expect(m.engine).toBe("vllm");
    expect(m.valid).toBe(true);
    expect(m.running).toBe(1.0);
    expect(m.waiting).toBe(4.0);
    expect(m.hasKv).toBe(true);
    expect(m.kvUsage).toBe(0.8125);
    expect(m.numGpuBlocks).toBe(7281);
    expect(m.blockSize).toBe(16);
    expectNoLora(m);
  });

  it("SGLang", () => {
    const m = parseEngineMetrics(SGLANG_METRICS);
    expect(m.engine).toBe("sglang");
    expect(m.valid).toBe(true);
    expect(m.running).toBe(7.0);
    expect(m.waiting).toBe(3.0);
    expect(m.hasKv).toBe(true);
    expect(m.kvUsage).toBe(0.62);
    expect(m.numGpuBlocks).toBe(182345);
    expect(m.blockSize).toBe(1);
    expectNoLora(m);
  });

  it("adversarial body: only well-formed lines count, NaN skipped, cut last line ignored", () => {
    const m = parseEngineMetrics(ADVERSARIAL_METRICS);
    expect(m.engine).toBe("vllm");
    expect(m.valid).toBe(true);
    expect(m.truncated).toBe(true);
    expect(m.running).toBe(6.5); // 2 + 3 + 1.5 + (-0); not the cut "12", not the malformed 99s
    expect(m.waiting).toBe(4.0); // 4 + NaN(skipped) + 0
    expect(m.kvUsage).toBe(0.15); // max(0.15, NaN skipped); gpu_cache 0.99 ignored: new name present
    expect(m.runningLora).toStrictEqual(["x\"y", "z"]);
    expect(m.waitingLora).toHaveLength(0);
    expect(m.maxLora).toBe(2); // 1.7e9 is newer than -Inf
  });

  it("model filter on the golden bodies", () => {
    expect(parseEngineMetrics(VLLM_V0X_METRICS, LLAMA).running).toBe(8.0);
    const other = parseEngineMetrics(VLLM_V0X_METRICS, "some/other-model");
    expect(other.valid).toBe(false);
    expect(other.running).toBe(0.0);
    expect(other.hasKv).toBe(false);
    // LoRA and cache info carry no model_name label, so they still count.
    expect(other.loraSeen).toBe(true);
    expect(other.numGpuBlocks).toBe(29127);
    expect(other.engine).toBe("vllm");
    expect(parseEngineMetrics(SGLANG_METRICS, "Qwen/Qwen3-8B").running).toBe(7.0);
  });
});

describe("parseEngineMetrics: rules", () => {
  it("sums running / waiting and takes the max KV over engines and models", () => {
    const m = parseEngineMetrics(
      "vllm:num_requests_running{engine=\"0\",model_name=\"a\"} 1\n" +
      "vllm:num_requests_running{engine=\"1\",model_name=\"a\"} 2\n" +
      "vllm:num_requests_running{engine=\"0\",model_name=\"b\"} 4\n" +
      "vllm:num_requests_waiting{engine=\"0\",model_name=\"a\"} 8\n" +
      "vllm:num_requests_waiting{engine=\"0\",model_name=\"b\"} 16\n" +
      "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"a\"} 0.25\n" +
      "vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"a\"} 0.75\n" +
      "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"b\"} 0.5\n");
    expect(m.running).toBe(7.0);
    expect(m.waiting).toBe(24.0);
    expect(m.kvUsage).toBe(0.75);
    const onlyB = parseEngineMetrics(
      "vllm:num_requests_running{engine=\"0\",model_name=\"a\"} 1\n" +
      "vllm:num_requests_running{engine=\"0\",model_name=\"b\"} 4\n" +
      "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"a\"} 0.9\n" +
      "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"b\"} 0.5\n", "b");
    expect(onlyB.running).toBe(4.0);
    expect(onlyB.kvUsage).toBe(0.5);
  });

  it("kv_cache_usage_perc wins over gpu_cache_usage_perc in either order", () => {
    const newFirst = parseEngineMetrics("vllm:kv_cache_usage_perc 0.25\nvllm:gpu_cache_usage_perc 0.5\n");
    const oldFirst = parseEngineMetrics("vllm:gpu_cache_usage_perc 0.5\nvllm:kv_cache_usage_perc 0.25\n");
    expect(newFirst.kvUsage).toBe(0.25);
    expect(oldFirst.kvUsage).toBe(0.25);
    const onlyOld = parseEngineMetrics("vllm:gpu_cache_usage_perc 0.5\n");
    expect(onlyOld.kvUsage).toBe(0.5);
    expect(onlyOld.valid).toBe(true); // KV alone is a load metric
  });

  it("the newest LoRA series wins wherever it is printed; ties keep the first", () => {
    const lines = [
      "vllm:lora_requests_info{max_lora=\"2\",running_lora_adapters=\"a\",waiting_lora_adapters=\"\"} 100\n",
      "vllm:lora_requests_info{max_lora=\"3\",running_lora_adapters=\"b\",waiting_lora_adapters=\"w\"} 300\n",
      "vllm:lora_requests_info{max_lora=\"4\",running_lora_adapters=\"c\",waiting_lora_adapters=\"\"} 200\n",
    ];
    const orders = [[0, 1, 2], [1, 0, 2], [2, 0, 1], [2, 1, 0]];
    for (let i = 0; i < orders.length; i++) {
      const m = parseEngineMetrics(lines[orders[i][0]] + lines[orders[i][1]] + lines[orders[i][2]]);
      expect(m.runningLora).toStrictEqual(["b"]);
      expect(m.waitingLora).toStrictEqual(["w"]);
      expect(m.maxLora).toBe(3);
    }
    const tie = parseEngineMetrics(
      "vllm:lora_requests_info{max_lora=\"1\",running_lora_adapters=\"first\"} 5\n" +
      "vllm:lora_requests_info{max_lora=\"1\",running_lora_adapters=\"second\"} 5\n");
    expect(tie.runningLora).toStrictEqual(["first"]);
    const nanFirst = parseEngineMetrics(
      "vllm:lora_requests_info{max_lora=\"1\",running_lora_adapters=\"nan\"} NaN\n" +
      "vllm:lora_requests_info{max_lora=\"1\",running_lora_adapters=\"real\"} 5\n");
    expect(nanFirst.runningLora).toStrictEqual(["real"]);
  });

  it("LoRA lists: empty, blanks and stray commas; max_lora odd values", () => {
    const m = parseEngineMetrics(
      "vllm:lora_requests_info{max_lora=\"None\",running_lora_adapters=\" a , ,b,\",waiting_lora_adapters=\"\"} 1\n");
    expect(m.loraSeen).toBe(true);
    expect(m.runningLora).toStrictEqual(["a", "b"]);
    expect(m.waitingLora).toHaveLength(0);
    expect(m.maxLora).toBe(0);
    expect(m.valid).toBe(false); // LoRA info alone is not load
    expect(parseEngineMetrics("vllm:lora_requests_info{max_lora=\"8.0\"} 1\n").maxLora).toBe(8);
    expect(parseEngineMetrics("vllm:lora_requests_info{max_lora=\"99999999999\"} 1\n").maxLora).toBe(i32.MAX_VALUE);
  });

  it("cache info: unknown values read as 0", () => {
    const m = parseEngineMetrics("vllm:cache_config_info{block_size=\"32\",num_gpu_blocks=\"None\"} 1\n");
    expect(m.blockSize).toBe(32);
    expect(m.numGpuBlocks).toBe(0);
    expect(m.engine).toBe("vllm");
    expect(m.valid).toBe(false);
  });

  it("NaN load samples are skipped; KV is clamped to 0..1; negative counts clamp to 0", () => {
    const m = parseEngineMetrics(
      "vllm:num_requests_running NaN\nvllm:num_requests_running 2\nvllm:num_requests_waiting -3\n" +
      "vllm:kv_cache_usage_perc 1.25\n");
    expect(m.running).toBe(2.0);
    expect(m.waiting).toBe(0.0);
    expect(m.kvUsage).toBe(1.0);
    expect(parseEngineMetrics("vllm:kv_cache_usage_perc -0.5\n").kvUsage).toBe(0.0);
    const onlyNaN = parseEngineMetrics("vllm:num_requests_running NaN\n");
    expect(onlyNaN.valid).toBe(false);
    expect(onlyNaN.running).toBe(0.0);
  });

  it("-Inf load samples are skipped like NaN: a +Inf series and a -Inf one do not sum to NaN", () => {
    const m = parseEngineMetrics(
      "vllm:num_requests_running{engine=\"0\"} +Inf\nvllm:num_requests_running{engine=\"1\"} -Inf\n" +
      "vllm:num_requests_waiting{engine=\"0\"} -Inf\nvllm:num_requests_waiting{engine=\"1\"} 2\n" +
      "vllm:kv_cache_usage_perc -Inf\n");
    expect(m.running).toBe(Infinity);
    expect(m.waiting).toBe(2.0);
    expect(m.hasKv).toBe(false);
    expect(parseEngineMetrics("vllm:num_requests_waiting -Inf\n").valid).toBe(false);
  });

  it("no load metric: valid is false, engine empty when nothing is recognised", () => {
    const cases = ["", "\n\n", "# HELP x\n", "foo 1\nbar{a=\"b\"} 2\n", "vllm:num_requests_running_total 3\n",
      "vllm:num_requests_running 3"]; // the last is cut: ignored
    for (let i = 0; i < cases.length; i++) {
      const m = parseEngineMetrics(cases[i]);
      expect(m.valid).toBe(false, cases[i]);
      expect(m.engine).toBe("", cases[i]);
      expect(m.running).toBe(0.0);
      expect(m.hasKv).toBe(false);
    }
    expect(parseEngineMetrics("vllm:num_requests_running 3").truncated).toBe(true);
  });

  it("a complete body (polled): its last line counts without a line break, nothing is truncated", () => {
    const m = parseEngineMetrics("vllm:num_requests_running 2\nvllm:num_requests_waiting 3", "", true);
    expect(m.valid).toBe(true);
    expect(m.running).toBe(2.0);
    expect(m.waiting).toBe(3.0);
    expect(m.truncated).toBe(false);
    expect(readGauge("g 1\ng 2", "g", "", true)).toBe(3.0);
    expect(readGauge("g 1\ng 2", "g")).toBe(1.0); // a health-check text may be cut: not counted
  });

  it("a body with both prefixes takes the engine that reports load", () => {
    const m = parseEngineMetrics("vllm:cache_config_info{block_size=\"16\"} 1\nsglang:num_running_reqs 5\n");
    expect(m.engine).toBe("sglang");
    expect(m.running).toBe(5.0);
    expect(m.blockSize).toBe(0); // the vLLM cache info is not blended into SGLang's numbers
  });

  it("every cut of the golden body counts only complete lines", () => {
    const text = VLLM_V0X_METRICS;
    const line0 = "vllm:num_requests_running{engine=\"0\",model_name=\"" + LLAMA + "\"} 5.0\n";
    const line1 = "vllm:num_requests_running{engine=\"1\",model_name=\"" + LLAMA + "\"} 3.0\n";
    const end0 = text.indexOf(line0) + line0.length;
    const end1 = text.indexOf(line1) + line1.length;
    expect(end0).toBeGreaterThan(line0.length - 1);
    // Every cut around the running lines, then a stride through the rest of the body.
    for (let cut = end0 - line0.length - 2; cut <= text.length; cut += cut < end1 + 2 ? 1 : 97) {
      const m = parseEngineMetrics(text.slice(0, cut));
      const expected = (cut >= end0 ? 5.0 : 0.0) + (cut >= end1 ? 3.0 : 0.0);
      expect(m.running).toBe(expected, cut.toString());
      expect(m.truncated).toBe(cut > 0 && text.charCodeAt(cut - 1) != 10);
    }
  });
});

describe("readGauge", () => {
  it("sums a gauge over series; NaN when absent", () => {
    expect(readGauge(VLLM_V0X_METRICS, "vllm:num_requests_running")).toBe(8.0);
    expect(readGauge(VLLM_V0X_METRICS, "vllm:kv_cache_usage_perc")).toBe(0.4375 + 0.30851063829787234);
    expect(readGauge(VLLM_V0X_METRICS, "vllm:time_to_first_token_seconds_count")).toBe(1690.0);
    expect(readGauge(SGLANG_METRICS, "sglang:num_used_tokens")).toBe(113056.0);
    expect(isNaN(readGauge(VLLM_V0X_METRICS, "vllm:time_to_first_token_seconds"))).toBe(true);
    expect(isNaN(readGauge(VLLM_V0X_METRICS, "vllm:num_requests"))).toBe(true);
    expect(isNaN(readGauge("", "x"))).toBe(true);
  });

  it("model filter, NaN series skipped, cut last line ignored", () => {
    expect(readGauge(VLLM_V0X_METRICS, "vllm:num_requests_running", LLAMA)).toBe(8.0);
    expect(isNaN(readGauge(VLLM_V0X_METRICS, "vllm:num_requests_running", "other"))).toBe(true);
    expect(readGauge("g{model_name=\"a\"} 1\ng{model_name=\"b\"} 2\ng 4\n", "g", "b")).toBe(6.0);
    expect(readGauge("g NaN\ng 2\n", "g")).toBe(2.0);
    expect(isNaN(readGauge("g NaN\n", "g"))).toBe(true);
    expect(readGauge(ADVERSARIAL_METRICS, "vllm:num_requests_running")).toBe(6.5);
  });
});
