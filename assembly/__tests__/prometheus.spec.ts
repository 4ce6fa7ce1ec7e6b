// Specs of the Prometheus text scanner (assembly/metrics/prometheus.ts, prom_number.ts) and of
// metricsFingerprint: every shape the format allows, golden bodies, and hostile input.
import { PromSample, SampleVisitor, forEachSample, forEachSampleIn } from "../metrics/prometheus";
import { utf8Encode } from "../util/utf8";
import { ScannedNumber, scanNumber } from "../metrics/prom_number";
import { metricsFingerprint } from "../metrics/fingerprint";
import { ADVERSARIAL_METRICS, SGLANG_METRICS, VLLM_OLD_METRICS, VLLM_V0X_METRICS } from "./metrics_fixtures";

/** Records every sample; `labelKey` (if set) is read from each sample into `labels`. */
class Recorder extends SampleVisitor {
  names: string[] = [];
  values: f64[] = [];
  labels: string[] = [];
  timestamps: f64[] = [];
  hasTimestamps: bool[] = [];
  constructor(public labelKey: string = "", public onlyName: string = "") {
    super();
  }
  wants(sample: PromSample): bool {
    return this.onlyName.length == 0 || sample.nameIs(this.onlyName);
  }
  visit(sample: PromSample): void {
    this.names.push(sample.name());
    this.values.push(sample.value);
    this.labels.push(this.labelKey.length > 0 ? sample.label(this.labelKey) : "");
    this.timestamps.push(sample.timestamp);
    this.hasTimestamps.push(sample.hasTimestamp);
  }
}

/** A Recorder that lists the names it wants, so the scanner pre-filters lines by their first bytes. */
class ListedRecorder extends Recorder {
  constructor(labelKey: string, public listed: string[]) {
    super(labelKey, "");
  }
  wantedNames(): string[] | null { return this.listed; }
  wants(sample: PromSample): bool {
    for (let i = 0; i < this.listed.length; i++) if (sample.nameIs(this.listed[i])) return true;
    return false;
  }
}

/** ListedRecorder's logic without the list (no pre-filter). */
class Unlisted extends ListedRecorder {
  wantedNames(): string[] | null { return null; }
}

/** Label comparisons on non-ASCII and escaped values. */
class Eq extends SampleVisitor {
  hits: bool[] = [];
  visit(s: PromSample): void {
    this.hits.push(s.labelIs("model_name", "Qwen/é-模型"));
    this.hits.push(s.labelIs("model_name", "Qwen/e-模型"));
    this.hits.push(s.labelIs("x", "\"ü"));
    this.hits.push(s.label("x") == "\"ü");
  }
}

/** The same samples, serialised, for comparing two scans. */
function dump(r: Recorder): string {
  let out = "";
  for (let i = 0; i < r.names.length; i++) {
    out += r.names[i] + "|" + r.labels[i] + "|" + r.values[i].toString() + "|" + r.timestamps[i].toString() + "\n";
  }
  return out;
}

function record(text: string, labelKey: string = "", onlyName: string = ""): Recorder {
  const recorder = new Recorder(labelKey, onlyName);
  forEachSample(text, recorder);
  return recorder;
}

/** Lines that are neither blank nor comments: for clean bodies, the number of samples. */
function countSampleLines(text: string): i32 {
  const lines = text.split("\n");
  let count = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line.length > 0 && line.charCodeAt(0) != 35) count++;
  }
  return count;
}

function numberOf(token: string): f64 {
  const out = new ScannedNumber();
  out.value = -12345; // sentinel: a failed scan must not be mistaken for a value
  return scanNumber(token, 0, token.length, out) ? out.value : -12345;
}

function isNumber(token: string): bool {
  return scanNumber(token, 0, token.length, new ScannedNumber());
}

// Deterministic pseudo-random source for fuzzing (xorshift32; Math.random is not allowed).
let seed: u32 = 0x9E3779B9;
function nextRandom(): u32 {
  seed ^= seed << 13;
  seed ^= seed >> 17;
  seed ^= seed << 5;
  return seed;
}

// Fragments of real lines and of broken ones, so random bodies reach every branch of the scanner.
const FUZZ_TOKENS: string[] = [
  "m", "vllm:num_requests_running", "_bucket", "{", "}", "engine=", "le=", "\"0\"", "\"+Inf\"", "\"",
  "\\", "\\\"", ",", "=", " ", " ", "\t", "\n", "\n", "\r\n", "1", "-2.5e3", "8.0", "NaN", "+Inf", ".",
  "e", "#", "# {x=\"y\"} 1", "1700000000000",
];

function randomBody(tokens: i32): string {
  let body = "";
  for (let i = 0; i < tokens; i++) {
    const r = nextRandom();
    // Mostly fragments; sometimes one arbitrary UTF-16 unit (lone surrogates included).
    body += (r & 15) == 0
      ? String.fromCharCode(<i32>((r >> 8) & 0xFFFF))
      : FUZZ_TOKENS[<i32>((r >> 8) % <u32>FUZZ_TOKENS.length)];
  }
  return body;
}

/** Counts samples and checks invariants every visited sample must satisfy. */
class InvariantChecker extends SampleVisitor {
  count: i32 = 0;
  broken: i32 = 0;
  visit(sample: PromSample): void {
    this.count++;
    const name = sample.name();
    if (name.length == 0 || sample.nameEnd > sample.length) this.broken++;
    if (sample.labelsStart > sample.labelsEnd || sample.labelsEnd > sample.length) this.broken++;
    // Looking up labels on any accepted line must be safe.
    sample.label("engine");
    sample.labelIs("model_name", "m");
    sample.hasLabel("le");
  }
}

/** Answers a fixed list of label questions about each sample. */
class Probe extends SampleVisitor {
  results: bool[] = [];
  visit(s: PromSample): void {
    this.results.push(s.labelIs("model_name", "m\"1"));
    this.results.push(s.labelIs("model_name", "m\\\"1"));
    this.results.push(s.labelIs("engine", "0"));
    this.results.push(s.labelIs("engine", "00"));
    this.results.push(s.labelIs("engine", ""));
    this.results.push(s.hasLabel("engine"));
    this.results.push(s.hasLabel("engin"));
    this.results.push(s.hasLabel("missing"));
    this.results.push(s.labelIsOrMissing("missing", "anything"));
    this.results.push(s.labelIsOrMissing("engine", "1"));
    this.results.push(s.label("missing") == "");
    this.results.push(s.labelIs("empty", ""));
  }
}

describe("forEachSample: lines", () => {
  it("reads names and values, with and without labels", () => {
    const r = record("a 1\nb{x=\"y\"} 2.5\nc_total{} -3\n", "x");
    expect(r.names).toStrictEqual(["a", "b", "c_total"]);
    expect(r.values).toStrictEqual([1.0, 2.5, -3.0]);
    expect(r.labels).toStrictEqual(["", "y", ""]);
  });

  it("skips comments, HELP / TYPE / EOF lines and blank lines", () => {
    const r = record("# HELP a Some help {x=\"1\"} 9\n# TYPE a gauge\n\n   \n\t\na 4\n# EOF\n");
    expect(r.names).toStrictEqual(["a"]);
    expect(r.values).toStrictEqual([4.0]);
  });

  it("handles CRLF line ends", () => {
    const r = record("a 1\r\nb{l=\"v\"} 2\r\n\r\n", "l");
    expect(r.names).toStrictEqual(["a", "b"]);
    expect(r.values).toStrictEqual([1.0, 2.0]);
    expect(r.labels).toStrictEqual(["", "v"]);
  });

  it("reads optional timestamps and ignores OpenMetrics exemplars", () => {
    const r = record("a 1 1700000000123\nb 2\nc 3 # {trace_id=\"x\"} 1.0 17.5\nd 4 -5 # {} 1\n");
    expect(r.values).toStrictEqual([1.0, 2.0, 3.0, 4.0]);
    expect(r.hasTimestamps).toStrictEqual([true, false, false, true]);
    expect(r.timestamps[0]).toBe(1700000000123.0);
    expect(r.timestamps[3]).toBe(-5.0);
  });

  it("reports _created, _total, _bucket samples like any other (the visitor decides)", () => {
    const r = record(
      "x_total 3.0\nx_created 1.7453119902e+09\nh_bucket{le=\"+Inf\"} 7.0\nh_count 7.0\nh_sum 0.5\n", "le");
    expect(r.names).toStrictEqual(["x_total", "x_created", "h_bucket", "h_count", "h_sum"]);
    expect(r.values[1]).toBe(1745311990.2);
    expect(r.labels[2]).toBe("+Inf");
  });

  it("drops an unterminated last line unless told the body is complete", () => {
    expect(record("a 1\nb 123").names).toStrictEqual(["a"]);
    const complete = new Recorder();
    forEachSample("a 1\nb 123", complete, true);
    expect(complete.names).toStrictEqual(["a", "b"]);
    expect(complete.values).toStrictEqual([1.0, 123.0]);
    expect(record("").names).toHaveLength(0);
    expect(record("a 1").names).toHaveLength(0);
  });

  it("calls wants() with the name only, and scans nothing for unwanted names", () => {
    // The unwanted lines are malformed after the name: they would be skipped anyway, but the
    // wanted line must still be found among them.
    const r = record("skip{ 1\nwant{k=\"v\"} 2\nskip 3\nwanted 4\n", "k", "want");
    expect(r.names).toStrictEqual(["want"]);
    expect(r.labels).toStrictEqual(["v"]);
  });
});

describe("forEachSample: labels", () => {
  it("unescapes \\\" \\\\ and \\n and keeps unknown escapes verbatim", () => {
    const r = record("m{a=\"q\\\"uote\",b=\"back\\\\slash\",c=\"new\\nline\",d=\"odd\\tescape\"} 1\n");
    expect(r.names).toHaveLength(1);
    const text = "m{a=\"q\\\"uote\",b=\"back\\\\slash\",c=\"new\\nline\",d=\"odd\\tescape\"} 1\n";
    expect(record(text, "a").labels[0]).toBe("q\"uote");
    expect(record(text, "b").labels[0]).toBe("back\\slash");
    expect(record(text, "c").labels[0]).toBe("new\nline");
    expect(record(text, "d").labels[0]).toBe("odd\\tescape");
  });

  it("keeps commas, equals signs and braces inside quoted values", () => {
    const text = "m{list=\"a,b,c\",eq=\"x=y\",brace=\"}{\",last=\"z\"} 5\n";
    expect(record(text, "list").labels[0]).toBe("a,b,c");
    expect(record(text, "eq").labels[0]).toBe("x=y");
    expect(record(text, "brace").labels[0]).toBe("}{");
    expect(record(text, "last").labels[0]).toBe("z");
    expect(record(text, "last").values[0]).toBe(5.0);
  });

  it("allows blanks around tokens and a trailing comma", () => {
    const text = "m {  a = \"1\" ,\tb=\"2\" , } 7\n";
    expect(record(text, "b").labels[0]).toBe("2");
    expect(record(text, "a").values[0]).toBe(7.0);
  });

  it("labelIs / hasLabel / labelIsOrMissing compare decoded values", () => {
    const probe = new Probe();
    forEachSample("m{engine=\"0\",model_name=\"m\\\"1\",empty=\"\"} 1\n", probe);
    expect(probe.results).toStrictEqual([true, false, true, false, false, true, false, false, true, false, true, true]);
  });

  it("skips malformed label blocks and keeps the next line", () => {
    const bad = [
      "m{a=\"1\" 1", "m{a=\"1} 1", "m{a} 1", "m{a=} 1", "m{a=1} 1", "m{=\"x\"} 1", "m{,} 1",
      "m{a=\"1\"b=\"2\"} 1", "m{a=\"1\",,b=\"2\"} 1", "m{a=\"\\\"} 1", "m{1a=\"x\"} 1", "m{a:b=\"x\"} 1",
      "m{\"quoted.name\"=\"x\"} 1", "{\"quoted.metric\"} 1", "m}{ 1", "m{a=\"x\"}",
    ];
    for (let i = 0; i < bad.length; i++) {
      const r = record(bad[i] + "\nok 2\n");
      expect(r.names).toStrictEqual(["ok"], bad[i]);
      expect(r.values).toStrictEqual([2.0], bad[i]);
    }
  });
});

describe("scanNumber", () => {
  it("reads the number shapes model servers print, exactly", () => {
    expect(numberOf("8.0")).toBe(8.0);
    expect(numberOf("0")).toBe(0.0);
    expect(numberOf("-3")).toBe(-3.0);
    expect(numberOf("+12")).toBe(12.0);
    expect(numberOf("007")).toBe(7.0);
    expect(numberOf("1.5e-3")).toBe(0.0015);
    expect(numberOf("1.5E+3")).toBe(1500.0);
    expect(numberOf("5.318639616e+09")).toBe(5318639616.0);
    expect(numberOf("1.7453122518803e+09")).toBe(1745312251.8803);
    expect(numberOf(".5")).toBe(0.5);
    expect(numberOf("5.")).toBe(5.0);
    expect(numberOf("0.1e1")).toBe(1.0);
    expect(numberOf("0.000001")).toBe(0.000001);
    // 17 significant digits (Python's shortest repr) take the slow path and stay exact.
    expect(numberOf("0.30851063829787234")).toBe(0.30851063829787234);
    expect(numberOf("412.71586290461454")).toBe(412.71586290461454);
    expect(numberOf("123456789012345678901234567890")).toBe(123456789012345678901234567890.0);
    expect(numberOf("1e400")).toBe(Infinity);
    expect(numberOf("1E-400")).toBe(0.0);
    expect(numberOf("9007199254740993")).toBe(9007199254740992.0); // 2^53 + 1 rounds to even
  });

  it("reads NaN and infinities in any case, with a sign", () => {
    expect(isNaN(numberOf("NaN"))).toBe(true);
    expect(isNaN(numberOf("nan"))).toBe(true);
    expect(numberOf("+Inf")).toBe(Infinity);
    expect(numberOf("-Inf")).toBe(-Infinity);
    expect(numberOf("Inf")).toBe(Infinity);
    expect(numberOf("infinity")).toBe(Infinity);
    expect(numberOf("-INFINITY")).toBe(-Infinity);
    expect(1.0 / numberOf("-0.0")).toBe(-Infinity); // the sign of zero survives
  });

  it("rejects anything that is not exactly one number", () => {
    const bad = ["", "+", "-", ".", "e5", "1e", "1e+", "1.2.3", "1,5", "0x10", "--1", "1-", "Infi", "nanx", "1 2", "١"];
    for (let i = 0; i < bad.length; i++) expect(isNumber(bad[i])).toBe(false, bad[i]);
  });

  it("refuses slices outside the string", () => {
    const out = new ScannedNumber();
    expect(scanNumber("12", 0, 3, out)).toBe(false);
    expect(scanNumber("12", -1, 2, out)).toBe(false);
    expect(scanNumber("12", 2, 1, out)).toBe(false);
  });
});

describe("golden bodies", () => {
  it("vLLM V1: every sample line is read, values exact", () => {
    const r = record(VLLM_V0X_METRICS, "engine");
    expect(r.names.length).toBe(countSampleLines(VLLM_V0X_METRICS));
    const kv = record(VLLM_V0X_METRICS, "engine", "vllm:kv_cache_usage_perc");
    expect(kv.values).toStrictEqual([0.4375, 0.30851063829787234]);
    expect(kv.labels).toStrictEqual(["0", "1"]);
    const created = record(VLLM_V0X_METRICS, "finished_reason", "vllm:request_success_created");
    expect(created.values).toHaveLength(6);
    expect(created.values[5]).toBe(1745311990.2);
    expect(created.labels[5]).toBe("abort");
    const buckets = record(VLLM_V0X_METRICS, "le", "vllm:time_to_first_token_seconds_bucket");
    expect(buckets.values).toHaveLength(34);
    expect(buckets.labels[16]).toBe("+Inf");
    expect(buckets.values[16]).toBe(850.0);
    const counts = record(VLLM_V0X_METRICS, "engine", "vllm:time_to_first_token_seconds_count");
    expect(counts.values).toStrictEqual([850.0, 840.0]);
    expect(record(VLLM_V0X_METRICS, "", "process_resident_memory_bytes").values).toStrictEqual([5318639616.0]);
  });

  it("vLLM (old) and SGLang bodies: every sample line is read", () => {
    expect(record(VLLM_OLD_METRICS).names.length).toBe(countSampleLines(VLLM_OLD_METRICS));
    expect(record(SGLANG_METRICS).names.length).toBe(countSampleLines(SGLANG_METRICS));
    const usage = record(SGLANG_METRICS, "model_name", "sglang:token_usage");
    expect(usage.values).toStrictEqual([0.62]);
    expect(usage.labels).toStrictEqual(["Qwen/Qwen3-8B"]);
  });

  it("adversarial body: exactly the lines marked valid, in order", () => {
    const r = record(ADVERSARIAL_METRICS, "engine");
    expect(r.names).toStrictEqual([
      "vllm:num_requests_running", "vllm:num_requests_running", "vllm:num_requests_running",
      "vllm:num_requests_running",
      "vllm:num_requests_waiting", "vllm:num_requests_waiting", "vllm:num_requests_waiting",
      "vllm:kv_cache_usage_perc", "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc",
      "vllm:lora_requests_info", "vllm:lora_requests_info",
      "special_value", "special_value", "special_value", "special_value", "special_value",
      "special_value", "special_value", "special_value", "special_value", "special_value",
      "special_value", "special_value", "special_value", "special_value", "special_value",
      "vllm:prompt_tokens_created",
    ]);
    expect(r.labels.slice(0, 7)).toStrictEqual(["0", "1", "2", "8", "0", "1", "2"]);
    expect(r.values.slice(0, 5)).toStrictEqual([2.0, 3.0, 1.5, -0.0, 4.0]);
    expect(r.hasTimestamps.slice(0, 5)).toStrictEqual([true, false, false, true, false]);
    expect(r.timestamps[0]).toBe(1700000000000.0);
    const models = record(ADVERSARIAL_METRICS, "model_name", "vllm:num_requests_running");
    expect(models.labels).toStrictEqual(["a,b=\"c\"}", "back\\slash\nnewline", "spaced", ""]);
    expect(record(ADVERSARIAL_METRICS, "model_name", "vllm:num_requests_waiting").labels[2]).toBe("modèle-ü");
    const lora = record(ADVERSARIAL_METRICS, "running_lora_adapters", "vllm:lora_requests_info");
    expect(lora.labels).toStrictEqual(["x\"y, z ,", "old"]);
    expect(lora.values).toStrictEqual([1.7e9, -Infinity]);
  });

  it("adversarial body: special values, exactly", () => {
    const r = record(ADVERSARIAL_METRICS, "kind", "special_value");
    expect(r.labels).toStrictEqual([
      "nan", "plus_inf", "minus_inf", "inf", "infinity", "minus_zero", "small_exponent",
      "leading_point", "trailing_point", "plus_sign", "overflow", "underflow", "thirty_digits",
      "point_exponent", "leading_zeros",
    ]);
    expect(isNaN(r.values[0])).toBe(true);
    expect(r.values.slice(1)).toStrictEqual([
      Infinity, -Infinity, Infinity, Infinity, -0.0, 0.0015, 0.5, 5.0, 12.0, Infinity, 0.0,
      123456789012345678901234567890.0, 1.0, 7.0,
    ]);
    expect(1.0 / r.values[5]).toBe(-Infinity);
  });
});

describe("hostile input never crashes", () => {
  it("random bodies from a fixed seed", () => {
    seed = 0x12345678;
    let total = 0;
    for (let i = 0; i < 300; i++) {
      const body = randomBody(<i32>(nextRandom() % 1500));
      const checker = new InvariantChecker();
      forEachSample(body, checker);
      forEachSample(body, new InvariantChecker(), true);
      expect(checker.broken).toBe(0);
      total += checker.count;
    }
    // The alphabet makes some lines well-formed ("a 9\n"); a scanner that rejects all is wrong too.
    expect(total).toBeGreaterThan(0);
  });

  it("random mutations of the golden vLLM body", () => {
    seed = 0xC0FFEE;
    for (let i = 0; i < 100; i++) {
      const cut = <i32>(nextRandom() % <u32>VLLM_V0X_METRICS.length);
      const body = VLLM_V0X_METRICS.slice(0, cut) + randomBody(<i32>(nextRandom() % 12)) +
        VLLM_V0X_METRICS.slice(cut + <i32>(nextRandom() % 40));
      const checker = new InvariantChecker();
      forEachSample(body, checker);
      expect(checker.broken).toBe(0);
      // One splice damages at most the lines it touches.
      expect(checker.count).toBeGreaterThan(countSampleLines(VLLM_V0X_METRICS) - 8);
    }
  });

  it("a 100 KB line: as a label value it is returned whole, as garbage it is skipped", () => {
    const long = "x".repeat(100 * 1024);
    const r = record("m{big=\"" + long + "\"} 1\n" + long + "\nok 2\n", "big");
    expect(r.names).toStrictEqual(["m", "ok"]);
    expect(r.labels[0].length).toBe(100 * 1024);
    // Escapes all the way: decoding stays linear and exact.
    const escaped = "\\\"".repeat(50 * 1024);
    const e = record("m{big=\"" + escaped + "\"} 3\n", "big");
    expect(e.labels[0]).toBe("\"".repeat(50 * 1024));
    expect(record("m{big=\"" + long + "\n").names).toHaveLength(0);
  });

  it("every prefix of a body yields a prefix of its samples (cut lines never count)", () => {
    const full = record(SGLANG_METRICS);
    for (let cut = 0; cut <= SGLANG_METRICS.length; cut++) {
      const part = record(SGLANG_METRICS.slice(0, cut));
      const n = part.names.length;
      expect(n).toBeLessThanOrEqual(full.names.length);
      expect(part.values).toStrictEqual(full.values.slice(0, n), cut.toString());
      // The sample count grows only when a line break is reached.
      if (cut > 0 && SGLANG_METRICS.charCodeAt(cut - 1) != 10) {
        expect(n).toBe(record(SGLANG_METRICS.slice(0, cut - 1)).names.length);
      }
    }
  });
});

describe("scanning bytes", () => {
  it("reads UTF-8 label values and compares them decoded", () => {
    const body = utf8Encode("a{model_name=\"Qwen/é-模型\",x=\"\\\"ü\"} 1\n");
    const r = new Recorder("model_name");
    forEachSampleIn(body, r);
    expect(r.labels).toStrictEqual(["Qwen/é-模型"]);
    const probe = new Probe();
    const eq = new Eq();
    forEachSampleIn(body, eq);
    expect(eq.hits).toStrictEqual([true, false, true, true]);
    forEachSampleIn(body, probe);
    expect(probe.results.length).toBe(12);
  });

  it("invalid UTF-8 in a label value decodes as U+FFFD, the line still counts", () => {
    const bytes = utf8Encode("a{x=\"?\"} 2\n");
    bytes[5] = 0xFF;
    const r = new Recorder("x");
    forEachSampleIn(bytes, r);
    expect(r.labels).toStrictEqual(["\uFFFD"]);
    expect(r.values).toStrictEqual([2.0]);
  });

  it("a visitor listing its names sees exactly the lines it would see without the list", () => {
    const bodies: string[] = [VLLM_V0X_METRICS, VLLM_OLD_METRICS, SGLANG_METRICS, ADVERSARIAL_METRICS,
      "m 1\nmm 2\n  m{a=\"b\"} 3\nm_total 4\nm", "x 1\n", "vllm:num_requests_running 5\n"];
    const lists: string[][] = [
      ["vllm:num_requests_running", "vllm:kv_cache_usage_perc", "vllm:time_to_first_token_seconds_bucket"],
      ["m", "x", "mm"], ["sglang:token_usage", "process_resident_memory_bytes"], ["é", "vllm:num_requests_runnin"],
    ];
    for (let b = 0; b < bodies.length; b++) {
      for (let l = 0; l < lists.length; l++) {
        const listed = new ListedRecorder("engine", lists[l]);
        forEachSample(bodies[b], listed);
        // Same visitor logic, no list: the scanner must not pre-filter.
        const unlisted = new Unlisted("engine", lists[l]);
        forEachSample(bodies[b], unlisted);
        expect(dump(listed)).toBe(dump(unlisted), bodies[b].substring(0, 40));
      }
    }
    const one = new ListedRecorder("", ["m"]);
    forEachSample("m 1\nmm 2\n  m{a=\"b\"} 3\nm_total 4\n", one);
    expect(one.values).toStrictEqual([1.0, 3.0]);
  });
});

describe("metricsFingerprint", () => {
  it("is equal for equal texts built differently", () => {
    const rebuilt = VLLM_V0X_METRICS.slice(0, 1000) + VLLM_V0X_METRICS.slice(1000);
    expect(metricsFingerprint(rebuilt)).toBe(metricsFingerprint(VLLM_V0X_METRICS));
    expect(metricsFingerprint("")).toBe(metricsFingerprint(""));
  });

  it("changes when one value in the middle changes (same length)", () => {
    const changed = VLLM_V0X_METRICS.replace(
      "vllm:num_requests_running{engine=\"1\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 3.0",
      "vllm:num_requests_running{engine=\"1\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 4.0");
    expect(changed.length).toBe(VLLM_V0X_METRICS.length);
    expect(changed == VLLM_V0X_METRICS).toBe(false);
    expect(metricsFingerprint(changed)).not.toBe(metricsFingerprint(VLLM_V0X_METRICS));
  });

  it("distinguishes short texts, tails, and trailing zero characters", () => {
    const texts = ["", "a", "b", "ab", "ba", "abc", "abcd", "abcde", "a\0", "a\0\0", "\0", "\0\0\0\0", "abcdefgh", "abcdefgi"];
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        expect(metricsFingerprint(texts[i])).not.toBe(metricsFingerprint(texts[j]), texts[i] + " vs " + texts[j]);
      }
    }
  });
});
