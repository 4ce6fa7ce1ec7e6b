// Per-request and per-scrape costs of the plugin's own code, measured inside Wasm: bench/micro/entry.ts
// is compiled like the release plugin (-O3, incremental runtime) and each function loops over
// one input; the time per iteration is reported (median of 5 runs). Run: npm run bench -- hash-cost
// (also parse-cost). Inputs: chat bodies of ~1 KB / 16 KB / 128 KB (multi-turn conversations),
// a vLLM /metrics text (the hand-written fixture) and a 64 KiB one (the Higress cap).
import asc from "assemblyscript/asc";
import { readFileSync } from "node:fs";
import { encodePairs } from "../../host-test/abi/pairs.js";

interface Entry {
  memory: WebAssembly.Memory;
  inputBuffer(len: number): number;
  inputReady(): void;
  prefixKeys(n: number): number;
  parseBody(n: number): number;
  parseMetrics(n: number): number;
  scrapeSnapshot(n: number): number;
}

async function compile(): Promise<Entry> {
  let binary: Uint8Array | null = null;
  const { error, stderr } = await asc.main(["bench/micro/entry.ts", "-O3", "--noAssert", "--runtime", "incremental", "--outFile", "micro.wasm",
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

/** Median microseconds per iteration over 5 timed runs (after one warm-up run). */
function time(run: (n: number) => number, iterations: number): number {
  run(Math.max(1, iterations >> 2));
  const samples: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint();
    const out = run(iterations);
    const t1 = process.hrtime.bigint();
    if (out < 0) throw new Error("bench function failed");
    samples.push(Number(t1 - t0) / 1000 / iterations);
  }
  return samples.sort((a, b) => a - b)[2];
}

/** A multi-turn chat body of about `bytes` bytes: a system prompt, then user/assistant turns. */
export function chatBody(bytes: number): Uint8Array {
  const words = (n: number, seed: number) => Array.from({ length: n }, (_, i) => `w${(i * 7919 + seed) % 10007}`).join(" ");
  const messages: Array<{ role: string; content: string }> = [{ role: "system", content: words(60, 1) }];
  let turn = 0;
  while (JSON.stringify({ model: "m", messages }).length < bytes) {
    messages.push({ role: turn % 2 === 0 ? "user" : "assistant", content: words(40, turn + 2) });
    turn++;
  }
  if (messages[messages.length - 1].role !== "user") messages.push({ role: "user", content: "next?" });
  return Buffer.from(JSON.stringify({ model: "m", messages, max_tokens: 256, stream: true }));
}

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

export interface CostRow { what: string; input: string; microseconds: number }

export async function runCosts(kind: "hash-cost" | "parse-cost"): Promise<CostRow[]> {
  const e = await compile();
  const rows: CostRow[] = [];
  if (kind === "hash-cost") {
    for (const [label, size, n] of [["1 KB", 1024, 4000], ["16 KB", 16 * 1024, 400], ["128 KB", 128 * 1024, 50]] as const) {
      const body = chatBody(size);
      setInput(e, body);
      rows.push({ what: "prefix_cache keys (JSON parse + blocks + SHA-1 + XOR)", input: `${label} chat body (${body.length} B)`, microseconds: time((k) => e.prefixKeys(k), n) });
      rows.push({ what: "JSON parse alone (global_least_request, costMode tokens)", input: `${label} chat body (${body.length} B)`, microseconds: time((k) => e.parseBody(k), n) });
    }
  } else {
    for (const [label, size, n] of [["fixture", 0, 2000], ["64 KiB", 64 * 1024, 200]] as const) {
      const text = metricsText(size);
      setInput(e, Buffer.from(text));
      rows.push({ what: "parse one host's /metrics (parseEngineMetrics)", input: `${label} vLLM text (${text.length} B)`, microseconds: time((k) => e.parseMetrics(k), n) });
    }
    for (const hosts of [4, 16]) {
      const text = metricsText(64 * 1024);
      const map = encodePairs(Array.from({ length: hosts }, (_, i) => [`10.0.0.${i + 1}:8000`, JSON.stringify({ health_status: "Healthy", metrics: text })] as [string, string]));
      setInput(e, map);
      rows.push({ what: "one scrape: host map + unescape + parse, every body changed", input: `${hosts} hosts x 64 KiB`, microseconds: time((k) => e.scrapeSnapshot(k), 20) });
    }
  }
  return rows;
}

export function costTable(rows: CostRow[]): string {
  return ["| work | input | µs per call (median of 5) |", "|---|---|---|", ...rows.map((r) => `| ${r.what} | ${r.input} | ${r.microseconds.toFixed(1)} |`)].join("\n");
}

if (process.argv[1]?.endsWith("costs.ts")) {
  const kind = (process.argv[2] ?? "hash-cost") as "hash-cost" | "parse-cost";
  console.log(costTable(await runCosts(kind)));
}
