// Load signals of one model server, read from its `/metrics` body (vLLM V1 or SGLang).
// Input: the body (UTF-8 bytes, or a string), and optionally a served model name: series whose `model_name` label
// differs are ignored (series without the label, e.g. LoRA and cache info, always count).
// Output: EngineMetrics. Several engines (data parallel `engine="0"`, `"1"`) or models: running
// and waiting are summed, KV usage is the maximum (the fullest engine decides), cache geometry
// is the largest per-engine value. LoRA: vLLM prints a new `vllm:lora_requests_info` series per
// change with the change's unix time as value; the newest series wins (the first on a tie).
// Failure behaviour: never throws; NaN and -Inf load samples are skipped (so no total is NaN);
// `valid` is false when no running/waiting/KV metric was found;
// `truncated` flags a body that does not end with a line break (its last line was ignored, unless
// the caller says the body is complete: a polled one is, Higress's health-check text may be cut).

import { PromSample, SampleVisitor, forEachSampleIn } from "./prometheus";
import { utf8Encode } from "../util/utf8";
import { MODEL_NAME_LABEL } from "./gauge";

export const ENGINE_VLLM = "vllm";
export const ENGINE_SGLANG = "sglang";

export class EngineMetrics {
  running: f64 = 0;
  waiting: f64 = 0;
  /** Fraction of KV cache in use, clamped to 0..1; meaningful only when hasKv. */
  kvUsage: f64 = 0;
  hasKv: bool = false;
  runningLora: string[] = [];
  waitingLora: string[] = [];
  maxLora: i32 = 0;
  loraSeen: bool = false;
  /** vLLM num_gpu_blocks, SGLang num_pages; 0 when unknown. */
  numGpuBlocks: i32 = 0;
  /** vLLM block_size, SGLang page_size (tokens); 0 when unknown. */
  blockSize: i32 = 0;
  /** "vllm" | "sglang" | "" (no metric of either engine recognised). */
  engine: string = "";
  valid: bool = false;
  truncated: bool = false;
}

// Series the parser reads; the numbering is private to this file.
const NONE = 0;
const RUNNING = 1;
const WAITING = 2;
const KV_USAGE = 3;
const KV_USAGE_DEPRECATED = 4;
const LORA_INFO = 5;
const CACHE_CONFIG = 6;

const ENGINE_METRIC_NAMES: string[] = [
  "vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
  "vllm:gpu_cache_usage_perc", "vllm:lora_requests_info", "vllm:cache_config_info",
  "sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage", "sglang:cache_config_info",
];

/** Per-engine accumulators, so a body that mixes prefixes cannot blend two engines. */
class EngineTotals {
  running: f64 = 0;
  waiting: f64 = 0;
  kvMax: f64 = -Infinity;
  kvDeprecatedMax: f64 = -Infinity;
  sawRunning: bool = false;
  sawWaiting: bool = false;
  sawAnything: bool = false;
  blocks: i32 = 0;
  blockSize: i32 = 0;

  sawKv(): bool {
    return this.kvMax > -Infinity || this.kvDeprecatedMax > -Infinity;
  }

  sawLoad(): bool {
    return this.sawRunning || this.sawWaiting || this.sawKv();
  }
}

class EngineMetricsCollector extends SampleVisitor {
  vllm: EngineTotals;
  sglang: EngineTotals = new EngineTotals();
  // Set by `wants` for the line being scanned.
  series: i32 = NONE;
  totals: EngineTotals;
  // Raw labels of the newest LoRA series; split once at the end.
  loraSeen: bool = false;
  loraStamp: f64 = 0;
  loraRunning: string = "";
  loraWaiting: string = "";
  loraMax: string = "";

  constructor(public modelFilter: string) {
    super();
    const vllm = new EngineTotals();
    this.vllm = vllm;
    this.totals = vllm;
  }

  // Every name `wants` accepts (the scanner skips other lines by their first eight bytes).
  wantedNames(): string[] | null {
    return ENGINE_METRIC_NAMES;
  }

  wants(sample: PromSample): bool {
    this.series = NONE;
    if (sample.nameStartsWith("vllm:")) {
      this.totals = this.vllm;
      if (sample.nameIs("vllm:num_requests_running")) this.series = RUNNING;
      else if (sample.nameIs("vllm:num_requests_waiting")) this.series = WAITING;
      else if (sample.nameIs("vllm:kv_cache_usage_perc")) this.series = KV_USAGE;
      else if (sample.nameIs("vllm:gpu_cache_usage_perc")) this.series = KV_USAGE_DEPRECATED;
      else if (sample.nameIs("vllm:lora_requests_info")) this.series = LORA_INFO;
      else if (sample.nameIs("vllm:cache_config_info")) this.series = CACHE_CONFIG;
    } else if (sample.nameStartsWith("sglang:")) {
      this.totals = this.sglang;
      if (sample.nameIs("sglang:num_running_reqs")) this.series = RUNNING;
      else if (sample.nameIs("sglang:num_queue_reqs")) this.series = WAITING;
      else if (sample.nameIs("sglang:token_usage")) this.series = KV_USAGE;
      else if (sample.nameIs("sglang:cache_config_info")) this.series = CACHE_CONFIG;
    }
    return this.series != NONE;
  }

  visit(sample: PromSample): void {
    if (this.modelFilter.length > 0 && !sample.labelIsOrMissing(MODEL_NAME_LABEL, this.modelFilter)) return;
    const totals = this.totals;
    totals.sawAnything = true;
    const value = sample.value;
    const series = this.series;
    if (series == LORA_INFO) {
      this.takeNewerLora(sample);
    } else if (series == CACHE_CONFIG) {
      const vllm = totals == this.vllm;
      totals.blocks = max(totals.blocks, parseLabelCount(sample.label(vllm ? "num_gpu_blocks" : "num_pages")));
      totals.blockSize = max(totals.blockSize, parseLabelCount(sample.label(vllm ? "block_size" : "page_size")));
    } else if (isNaN(value) || value == -Infinity) {
      // No load information: NaN, and -Inf (no count is below zero), which summed with a +Inf
      // series made the total NaN and the host unplaceable.
      return;
    } else if (series == RUNNING) {
      totals.running += value;
      totals.sawRunning = true;
    } else if (series == WAITING) {
      totals.waiting += value;
      totals.sawWaiting = true;
    } else if (series == KV_USAGE) {
      totals.kvMax = max(totals.kvMax, value);
    } else if (series == KV_USAGE_DEPRECATED) {
      totals.kvDeprecatedMax = max(totals.kvDeprecatedMax, value);
    }
  }

  private takeNewerLora(sample: PromSample): void {
    const stamp = sample.value;
    const newer = !this.loraSeen || stamp > this.loraStamp || (isNaN(this.loraStamp) && !isNaN(stamp));
    if (!newer) return;
    this.loraSeen = true;
    this.loraStamp = stamp;
    this.loraRunning = sample.label("running_lora_adapters");
    this.loraWaiting = sample.label("waiting_lora_adapters");
    this.loraMax = sample.label("max_lora");
  }
}

/** Integer of a label value such as "29127" or "16.0"; 0 for "None", "" or garbage. */
function parseLabelCount(text: string): i32 {
  let value: i64 = 0;
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (<u32>digit >= 10) break;
    if (value < <i64>i32.MAX_VALUE) value = value * 10 + digit;
    digits++;
  }
  if (digits == 0) return 0;
  return <i32>min<i64>(value, <i64>i32.MAX_VALUE);
}

/** "a,b, c" -> ["a", "b", "c"]; empty entries are dropped. */
function splitAdapterList(list: string): string[] {
  const adapters = new Array<string>();
  if (list.length == 0) return adapters;
  const parts = list.split(",");
  for (let i = 0; i < parts.length; i++) {
    const name = parts[i].trim();
    if (name.length > 0) adapters.push(name);
  }
  return adapters;
}

function fillFrom(result: EngineMetrics, totals: EngineTotals): void {
  result.running = max(totals.running, 0.0);
  result.waiting = max(totals.waiting, 0.0);
  // The deprecated name is used only when the current one is absent (vLLM < 0.9 prints only it).
  const kv = totals.kvMax > -Infinity ? totals.kvMax : totals.kvDeprecatedMax;
  result.hasKv = kv > -Infinity;
  result.kvUsage = result.hasKv ? min(max(kv, 0.0), 1.0) : 0.0;
  result.numGpuBlocks = totals.blocks;
  result.blockSize = totals.blockSize;
  result.valid = totals.sawLoad();
}

export function parseEngineMetrics(text: string, modelFilter: string = "", complete: bool = false): EngineMetrics {
  return parseEngineMetricsIn(utf8Encode(text), modelFilter, complete);
}

/** parseEngineMetrics over the body's UTF-8 bytes (what the plugin holds), scanned in place.
 *  `complete`: the body is known to be whole, so a last line without its break counts. */
export function parseEngineMetricsIn(bytes: Uint8Array, modelFilter: string = "", complete: bool = false): EngineMetrics {
  const collector = new EngineMetricsCollector(modelFilter);
  forEachSampleIn(bytes, collector, complete);
  const result = new EngineMetrics();
  const length = bytes.length;
  result.truncated = !complete && length > 0 && bytes[length - 1] != 10;
  // A server is one engine; if a body somehow carries both prefixes, the one with load wins.
  const vllm = collector.vllm;
  const sglang = collector.sglang;
  if (vllm.sawLoad() || (vllm.sawAnything && !sglang.sawLoad())) {
    result.engine = ENGINE_VLLM;
    fillFrom(result, vllm);
  } else if (sglang.sawAnything) {
    result.engine = ENGINE_SGLANG;
    fillFrom(result, sglang);
  }
  if (collector.loraSeen) {
    result.loraSeen = true;
    result.runningLora = splitAdapterList(collector.loraRunning);
    result.waitingLora = splitAdapterList(collector.loraWaiting);
    result.maxLora = parseLabelCount(collector.loraMax);
  }
  return result;
}
