// `npm run bench -- mooncake [--trace FILE] [--trace-speed K] [--pods N]`: replays a Mooncake-format
// trace, plain or gzipped (default: bench/trace/data/, the vendored FAST'25 synthetic trace:
// 3,993 requests over ~17 min, mean input 15k tokens) at its own timestamps divided by K, on N
// Qwen3-32B/2xH100 pods (default 4 = 8 H100, Dynamo's A/B used 8 H100 with Qwen3-32B FP8).
// Published anchor (Dynamo, tool-agent trace at 0.8x speed): KV-aware routing cut mean TTFT
// 63.7 s -> 2.6 s and p99 333 s -> 17.9 s against round robin.
// Failure behaviour: throws when the file is missing or malformed (the line is named).
import fs from "node:fs";
import path from "node:path";
import { parseMooncakeTrace, readTraceFile, traceReplay } from "../trace/mooncake.js";
import { REPO_ROOT } from "../topology.js";
import type { LoadScenario } from "./types.js";

export const TRACE_SCENARIO = {
  name: "mooncake",
  description: "Mooncake-format trace replay (--trace FILE, --trace-speed K, --pods N; default: the FAST'25 synthetic trace on 4 Qwen3-32B/2xH100 pods).",
};

export const DEFAULT_TRACE = path.join(REPO_ROOT, "bench", "trace", "data", "mooncake_synthetic_trace.jsonl.gz");

export interface TraceScenarioOptions { file?: string; speed?: number; pods?: number; maxRequests?: number; seed?: number }

export function mooncakeScenario(o: TraceScenarioOptions = {}): LoadScenario {
  const file = o.file ?? process.env.MOONCAKE_TRACE ?? DEFAULT_TRACE;
  if (!fs.existsSync(file)) throw new Error(`trace file not found: ${file} (--trace FILE or MOONCAKE_TRACE)`);
  const requests = parseMooncakeTrace(readTraceFile(file));
  const speed = o.speed ?? 1;
  const pods = o.pods ?? 4;
  const timesMs = traceReplay(requests, { speed, seed: 1, maxRequests: o.maxRequests }).timesMs;
  const spanMs = timesMs[timesMs.length - 1] ?? 0;
  const inputs = requests.map((r) => r.inputLength);
  return {
    kind: "load",
    name: "mooncake",
    description: `${path.basename(file)} replayed at ${speed}x on ${pods} Qwen3-32B/2xH100 pods (${timesMs.length} requests over ${(spanMs / 1000).toFixed(0)} simulated s).`,
    // Trace prompts reach 191k tokens: a 128k context (Qwen3 with YaRN); longer ones are refused (400).
    topology: { pods, profile: "qwen3-32b-2xh100", profileOverrides: { maxModelLen: 131_072 }, timeScale: 1, gateways: 1 },
    workload: (seed) => traceReplay(requests, { speed, seed, maxRequests: o.maxRequests }).workload,
    load: { mode: "trace", timesMs },
    policies: ["round_robin", "random", "global_least_request", "prefix_cache", "omniscient"],
    slo: { ttftMs: 2000 },
    maxWallMs: spanMs + 120_000,
    parameters: {
      trace: path.basename(file), speed, requests: timesMs.length,
      meanInputTokens: Math.round(inputs.reduce((a, b) => a + b, 0) / Math.max(1, inputs.length)),
      published: "Dynamo (8 H100, Qwen3-32B FP8, tool-agent trace at 0.8x): KV routing mean TTFT 63.7 s -> 2.6 s, p99 333 s -> 17.9 s vs round robin",
    },
  };
}
