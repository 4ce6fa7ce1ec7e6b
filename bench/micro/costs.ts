// Per-request and per-scrape costs of the plugin's own code, measured inside Wasm: bench/micro/entry.ts
// is compiled like the release plugin (-O3, incremental runtime) and each function loops over
// one input; the time per iteration is reported (median of 5 runs). Run: npm run bench -- hash-cost
// (also parse-cost). Inputs: chat bodies of ~1 KB / 4 KB / 16 KB / 128 KB (multi-turn
// conversations), a vLLM /metrics text (the hand-written fixture) and a 64 KiB one (the Higress
// cap). Throughput columns: body bytes per second (MB = 10^6 B) and µs per KiB of body; SHA-1 of
// the same bytes in Wasm and in node:crypto (OpenSSL, native) are the reference limits.
// With `--baseline <git ref>` (npm run bench -- hash-cost --baseline ffd4194) the same entry is
// also compiled against that commit's assembly/ (git archive into a temporary directory) and each
// row is timed for both builds in turns (11 runs each, medians), so before/after come from one run on one machine.
import asc from "assemblyscript/asc";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { encodePairs } from "../../host-test/abi/pairs.js";
import { chatBody, withLineBreaks } from "./chat-body.js";

interface Entry {
  memory: WebAssembly.Memory;
  inputBuffer(len: number): number;
  inputReady(): void;
  prefixKeys(n: number): number;
  parseBody(n: number): number;
  sha1Only(n: number): number;
  decodeSnapshot(n: number): number;
  candidatesFromHosts?(n: number): number;
  candidatesCached?(n: number): number;
  candidatesRefreshed?(n: number): number;
  slotWaitFull?(n: number): number;
  slotWaitReused?(n: number): number;
  overdueWait?(n: number): number;
  responseScan?(n: number): number;
  promptChars(n: number): number;
  fitAndPredict(n: number): number;
  parseMetrics(n: number): number;
  scrapeSnapshot(n: number): number;
}

async function compile(entryPath = "bench/micro/entry.ts"): Promise<Entry> {
  let binary: Uint8Array | null = null;
  const { error, stderr } = await asc.main([entryPath, "-O3", "--noAssert", "--runtime", "incremental", "--outFile", "micro.wasm",
    "--config", "scripts/asconfig-standalone.json"], {
    writeFile(name: string, contents: Uint8Array | string) { if (name.endsWith(".wasm") && typeof contents !== "string") binary = contents; },
  });
  if (error || binary === null) throw new Error(`asc failed: ${error?.message}\n${stderr.toString()}`);
  const module = await WebAssembly.compile(binary);
  const instance = await WebAssembly.instantiate(module, { env: { abort: () => { throw new Error("wasm abort"); } } });
  return instance.exports as unknown as Entry;
}

function setInput(e: Entry, bytes: Uint8Array): void {
  const ptr = e.inputBuffer(bytes.length);
  new Uint8Array(e.memory.buffer, ptr, bytes.length).set(bytes);
  e.inputReady();
}

/** Median microseconds per iteration of each of `runs`, over `rounds` timed runs each taken in
 *  turns (a, b, a, b, ...) after one warm-up of each: a shared machine's load changes hit every
 *  run alike (before/after). */
function timeInTurns(runs: Array<(n: number) => number>, iterations: number, rounds: number): number[] {
  for (const run of runs) run(Math.max(1, iterations >> 2));
  const samples: number[][] = runs.map(() => []);
  for (let r = 0; r < rounds; r++) {
    runs.forEach((run, i) => {
      const t0 = process.hrtime.bigint();
      if (run(iterations) < 0) throw new Error("bench function failed");
      samples[i].push(Number(process.hrtime.bigint() - t0) / 1000 / iterations);
    });
  }
  return samples.map((xs) => xs.sort((x, y) => x - y)[xs.length >> 1]);
}

/** Median microseconds per iteration over 5 timed runs (after one warm-up run). */
function time(run: (n: number) => number, iterations: number): number {
  return timeInTurns([run], iterations, 5)[0];
}

/** Medians of µs per iteration of `a` and `b` over 11 runs each, in turns (before/after). */
function timePair(a: (n: number) => number, b: (n: number) => number, iterations: number): [number, number] {
  const [ma, mb] = timeInTurns([a, b], iterations, 11);
  return [ma, mb];
}

export { chatBody };

/** The vLLM fixture, grown to ~`bytes` with extra per-LoRA latency histogram series. */
export function metricsText(bytes: number): string {
  let text = readFileSync("test/fixtures/metrics/vllm-v0.x.txt", "utf8");
  let i = 0;
  while (text.length < bytes) {
    for (const le of ["0.001", "0.005", "0.01", "0.05", "0.1", "0.5", "1.0", "5.0", "+Inf"]) {
      text += `vllm:request_queue_time_seconds_bucket{engine="0",le="${le}",model_name="adapter-${i}"} ${i * 3}.0\n`;
    }
    i++;
  }
  return text;
}

export interface CostRow { what: string; input: string; microseconds: number; bytes?: number; before?: number }

/** Median µs per SHA-1 of `bytes` in node:crypto, timed like the Wasm functions. */
function nodeSha1(bytes: Uint8Array, iterations: number): number {
  return time((k) => {
    let x = 0;
    for (let i = 0; i < k; i++) x ^= createHash("sha1").update(bytes).digest()[0];
    return x >= 0 ? 1 : 0;
  }, iterations);
}

/** One row: its input bytes go into the entry, then `run` is timed (null: not a Wasm function). */
interface Spec {
  what: string; input: string; bytes?: number; data: Uint8Array; run: ((e: Entry) => (k: number) => number) | null; n: number;
  /** Another entry, compiled for the current tree only (no before). */
  entry?: string;
}

function specs(kind: "hash-cost" | "parse-cost"): Spec[] {
  const out: Spec[] = [];
  if (kind === "hash-cost") {
    for (const [label, size, n] of [["1 KB", 1024, 4000], ["4 KB", 4096, 1000], ["16 KB", 16 * 1024, 400], ["128 KB", 128 * 1024, 50]] as const) {
      const data = chatBody(size);
      const input = `${label} chat body (${data.length} B)`;
      const bytes = data.length;
      out.push({ what: "prefix_cache keys (JSON parse + blocks + SHA-1 + XOR)", input, bytes, data, n, run: (e) => (k) => e.prefixKeys(k) });
      out.push({ what: "JSON parse alone (global_least_request, costMode tokens)", input, bytes, data, n, run: (e) => (k) => e.parseBody(k) });
      out.push({ what: "SHA-1 of the whole body, Wasm (reference)", input, bytes, data, n, run: (e) => (k) => e.sha1Only(k) });
      out.push({ what: "SHA-1 of the whole body, node:crypto (reference)", input, bytes, data, n, run: null });
      const lines = withLineBreaks(data);
      out.push({ what: "prompt length (promptChars, predicted_latency / costMode tokens), line breaks escaped", input: `${label} chat body (${lines.length} B)`,
        bytes: lines.length, data: lines, n: n * 4, run: (e) => (k) => e.promptChars(k) });
    }
    out.push({ what: "predicted_latency model: refit + 3 predictions per candidate", input: "256 candidates", data: new Uint8Array(0), n: 200,
      run: (e) => (k) => e.fitAndPredict(k) });
  } else {
    for (const [label, size, n] of [["fixture", 0, 2000], ["64 KiB", 64 * 1024, 200]] as const) {
      const text = metricsText(size);
      out.push({ what: "parse one host's /metrics (parseEngineMetrics)", input: `${label} vLLM text (${text.length} B)`, data: Buffer.from(text), n, run: (e) => (k) => e.parseMetrics(k) });
    }
    for (const hosts of [4, 16]) {
      const text = metricsText(64 * 1024);
      const data = encodePairs(Array.from({ length: hosts }, (_, i) => [`10.0.0.${i + 1}:8000`, JSON.stringify({ health_status: "Healthy", metrics: text })] as [string, string]));
      out.push({ what: "one scrape: host map + unescape + parse, every body changed", input: `${hosts} hosts x 64 KiB`, data, n: 20, run: (e) => (k) => e.scrapeSnapshot(k) });
      out.push({ what: "the same scrape's JSON decode alone (host map + unescape)", input: `${hosts} hosts x 64 KiB`, data, n: 20, run: (e) => (k) => e.decodeSnapshot(k) });
    }
    // predicted_latency, per candidate on a full pod: the slot wait (list schedule) + prefill ahead.
    for (const [slots, streams, n] of [[4, 8, 20_000], [256, 300, 200], [256, 1000, 50]] as const) {
      const data = Buffer.alloc(8);
      data.writeInt32LE(slots, 0);
      data.writeInt32LE(streams, 4);
      out.push({ what: "predicted_latency per candidate, full pod: slot wait + prefill ahead", input: `${slots} slots, ${streams} open streams`, data, n,
        run: (e) => (k) => (e.slotWaitFull === undefined ? -1 : e.slotWaitFull(k)), entry: "bench/micro/entry-slo.ts" });
      out.push({ what: "the same, requests 0.01 ms apart (the wait reused within 2 ms)", input: `${slots} slots, ${streams} open streams`, data, n: n * 10,
        run: (e) => (k) => (e.slotWaitReused === undefined ? -1 : e.slotWaitReused(k)), entry: "bench/micro/entry-slo.ts" });
    }
    // Without batch slots: the overdue wait, a pass over the pod's streams per candidate (no reuse).
    for (const [started, streams, n] of [[4, 8, 20_000], [64, 300, 2_000], [64, 1000, 500]] as const) {
      const data = Buffer.alloc(8);
      data.writeInt32LE(started, 0);
      data.writeInt32LE(streams, 4);
      out.push({ what: "predicted_latency per candidate without modelBatchSlots: overdue wait", input: `${streams} open streams, ${started} started`, data, n,
        run: (e) => (k) => (e.overdueWait === undefined ? -1 : e.overdueWait(k)), entry: "bench/micro/entry-slo.ts" });
    }
    // predicted_latency reads every response body: SSE events, and the usage (tokens, cached tokens).
    for (const [tokens, n] of [[64, 20_000], [1024, 2_000]] as const) {
      const data = Buffer.from(sseBody(tokens));
      out.push({ what: "predicted_latency response scan (SSE events + usage)", input: `${tokens}-token stream with usage (${data.length} B)`, bytes: data.length, data, n,
        run: (e) => (k) => (e.responseScan === undefined ? -1 : e.responseScan(k)), entry: "bench/micro/entry-slo.ts" });
    }
    // Scale of a pick, plugin side: every request reads the cluster's host map and its candidate set.
    for (const [hosts, n] of [[10, 2000], [1000, 100], [10_000, 10]] as const) {
      const data = encodePairs(Array.from({ length: hosts }, (_, i) => [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8000`, JSON.stringify({ health_status: "Healthy", metrics: "" })] as [string, string]));
      out.push({ what: "per request: read the host map + candidate set (unchanged hosts)", input: `${hosts} hosts (${data.length} B)`, data, n,
        run: (e) => (k) => (e.candidatesFromHosts === undefined ? -1 : e.candidatesFromHosts(k)) });
      out.push({ what: "the same as the plugin now runs it (SnapshotCache: copy + compare, no parse)", input: `${hosts} hosts (${data.length} B)`, data, n,
        run: (e) => (k) => (e.candidatesCached === undefined ? -1 : e.candidatesCached(k)), entry: "bench/micro/entry-hosts.ts" });
      out.push({ what: "the same with hostsRefreshMs > 0, map younger than the interval (+ has(picked))", input: `${hosts} hosts (${data.length} B)`, data, n: 20_000,
        run: (e) => (k) => (e.candidatesRefreshed === undefined ? -1 : e.candidatesRefreshed(k)), entry: "bench/micro/entry-hosts.ts" });
    }
  }
  return out;
}

/** A vLLM-shaped streamed chat answer of `tokens` tokens, its usage chunk (include_usage) and [DONE]. */
function sseBody(tokens: number): string {
  const chunk = (delta: object, extra: object = {}) => `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, logprobs: null, finish_reason: null }], ...extra })}\n\n`;
  let out = chunk({ role: "assistant", content: "" });
  for (let i = 0; i < tokens; i++) out += chunk({ content: ` word${i % 97}` });
  const usage = { prompt_tokens: 1800, total_tokens: 1800 + tokens, completion_tokens: tokens, prompt_tokens_details: { cached_tokens: 1024 } };
  return out + `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage })}\n\ndata: [DONE]\n\n`;
}

/** The bench entry compiled against `ref`'s assembly/ (for --baseline). */
async function compileBaseline(ref: string): Promise<Entry> {
  const dir = mkdtempSync(join(tmpdir(), "llmlb-baseline-"));
  try {
    const tar = execFileSync("git", ["archive", ref, "assembly"], { maxBuffer: 1 << 28 });
    execFileSync("tar", ["-x", "-C", dir], { input: tar });
    mkdirSync(join(dir, "bench", "micro"), { recursive: true });
    // Modules that moved since `ref` are imported from where `ref` had them (same file name).
    const files = execFileSync("git", ["ls-tree", "-r", "--name-only", ref, "assembly"], { encoding: "utf8" }).split("\n");
    const entry = readFileSync("bench/micro/entry.ts", "utf8").replace(/"\.\.\/\.\.\/(assembly\/[^"]+)"/g, (whole, path: string) => {
      if (files.includes(`${path}.ts`)) return whole;
      const moved = files.find((f) => f.endsWith(`/${basename(path)}.ts`));
      return moved === undefined ? whole : `"../../${moved.slice(0, -3)}"`;
    });
    writeFileSync(join(dir, "bench", "micro", "entry.ts"), entry);
    return await compile(join(dir, "bench", "micro", "entry.ts"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runCosts(kind: "hash-cost" | "parse-cost", baselineRef: string | null = null): Promise<CostRow[]> {
  const e = await compile();
  const base = baselineRef === null ? null : await compileBaseline(baselineRef);
  const rows: CostRow[] = [];
  const others = new Map<string, Entry>();
  for (const s of specs(kind)) {
    const row: CostRow = { what: s.what, input: s.input, bytes: s.bytes, microseconds: 0 };
    if (s.run === null) {
      row.microseconds = nodeSha1(s.data, s.n);
    } else if (s.entry !== undefined) {
      if (!others.has(s.entry)) others.set(s.entry, await compile(s.entry));
      const other = others.get(s.entry)!;
      setInput(other, s.data);
      row.microseconds = time(s.run(other), s.n);
    } else {
      setInput(e, s.data);
      if (base !== null) {
        setInput(base, s.data);
        [row.before, row.microseconds] = timePair(s.run(base), s.run(e), s.n);
      } else {
        row.microseconds = time(s.run(e), s.n);
      }
    }
    rows.push(row);
  }
  return rows;
}

/** µs with one decimal, or three below 1 µs (per-request rows compare fractions of a µs). */
const fmt = (us: number) => us.toFixed(us < 1 ? 3 : 1);

export function costTable(rows: CostRow[]): string {
  const rate = (r: CostRow) => (r.bytes === undefined ? "-" : (r.bytes / r.microseconds).toFixed(0));
  const perKb = (r: CostRow) => (r.bytes === undefined ? "-" : (r.microseconds / (r.bytes / 1024)).toFixed(2));
  if (rows.some((r) => r.before !== undefined)) {
    const before = (r: CostRow) => (r.before === undefined ? "-" : r.before.toFixed(1));
    const gain = (r: CostRow) => (r.before === undefined ? "-" : `${(r.before / r.microseconds).toFixed(2)}x`);
    return ["| work | input | before µs | after µs | speed-up | after MB/s | after µs per KiB |", "|---|---|---|---|---|---|---|",
      ...rows.map((r) => `| ${r.what} | ${r.input} | ${before(r)} | ${fmt(r.microseconds)} | ${gain(r)} | ${rate(r)} | ${perKb(r)} |`)].join("\n");
  }
  return ["| work | input | µs per call (median of 5) | MB/s | µs per KiB |", "|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.what} | ${r.input} | ${fmt(r.microseconds)} | ${rate(r)} | ${perKb(r)} |`)].join("\n");
}

/** `--baseline <ref>` from a scenario's arguments, or null. */
export function baselineArg(args: string[]): string | null {
  const i = args.indexOf("--baseline");
  if (i < 0) return null;
  const ref = args[i + 1];
  if (ref === undefined || ref.startsWith("--")) throw new Error("--baseline needs a git ref, e.g. --baseline ffd4194");
  return ref;
}

if (process.argv[1]?.endsWith("costs.ts")) {
  const kind = (process.argv[2] ?? "hash-cost") as "hash-cost" | "parse-cost";
  console.log(costTable(await runCosts(kind, baselineArg(process.argv.slice(3)))));
}
