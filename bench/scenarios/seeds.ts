// The seed write-ups' shapes (backends-and-workloads.md), scaled to this machine:
// - photoroom: ~1 s uniform requests behind 4 gateway replicas (processes) on 8 pods with 4-seat
//   batches near capacity: per-gateway least request vs the global view.
// - galileo: 500 / 1k / 8k-token inputs (x 0.25) on 6 pods: per-class p99 vs round robin.
// - higress: GenAI-Perf multi-turn, 60 sessions x 5 rounds, 200 in / 800 out (x 0.25),
//   concurrency 20, on 4 pods with 4k-token KV pools.
// - blog: 5 system prompts at concurrency 32 (use --concurrency 1 for the TTFT comparison).
import { blogWorkload, galileoWorkload, higressWorkload, photoroomWorkload } from "../workloads/seeds.js";
import type { LoadScenario } from "./types.js";

export const photoroom: LoadScenario = {
  kind: "load",
  name: "photoroom",
  description: "Photoroom: uniform ~1 s requests (in 128 / out 100), 4 gateways x 8 pods (4 seats each), Poisson 30 req/s.",
  topology: { pods: 8, profile: "llama-8b-h100", profileOverrides: { maxNumSeqs: 4 }, timeScale: 1, gateways: 4 },
  workload: (seed) => photoroomWorkload(1200, seed),
  load: { mode: "stages", arrivals: "poisson", stages: [{ rate: 30, durationMs: 30_000 }] },
  policies: ["round_robin", "least_request", "global_least_request", "endpoint_metrics", "omniscient"],
  spread: "random",
  slo: { e2eMs: 2000 },
  maxWallMs: 60_000,
  parameters: { published: "10 gateways x 20 pods: local least request p90 7 s / p99 > 20 s; global p99 ~2 s" },
};

export const galileo: LoadScenario = {
  kind: "load",
  name: "galileo",
  description: "Galileo: inputs 125 / 250 / 2000 tokens (500 / 1k / 8k x 0.25), output 64, 6 pods (4 seats), Poisson 35 req/s.",
  topology: { pods: 6, profile: "llama-8b-h100", profileOverrides: { maxNumSeqs: 4 }, timeScale: 1, gateways: 1 },
  workload: (seed) => galileoWorkload(800, seed, 0.25, 64),
  load: { mode: "stages", arrivals: "poisson", stages: [{ rate: 35, durationMs: 20_000 }] },
  policies: ["round_robin", "least_request", "global_least_request", "global_least_bytes", "global_least_tokens", "endpoint_metrics", "omniscient"],
  slo: { e2eMs: 2000 },
  maxWallMs: 60_000,
  parameters: { published: "38 A100s, 50 QPS: p99 -27% / -29% / -73% vs round robin for 500 / 1000 / 8000-token inputs" },
};

// Galileo as Galileo ran it: 38 servers that process one request at a time, time growing with the
// input (prefill-dominated, ~0.24 s for 500 tokens, ~2 s for 8k, 16 output tokens), full-size
// inputs 500 / 1000 / 8000, Poisson 50 req/s (~75% load). Compare count vs bytes vs tokens here and
// on the batched \`galileo\` scenario.
export const galileoUnbatched: LoadScenario = {
  kind: "load",
  name: "galileo-unbatched",
  description: "Galileo unbatched: 38 one-request-at-a-time pods (prefill-dominated), inputs 500 / 1000 / 8000, output 16, Poisson 50 req/s.",
  topology: { pods: 38, profile: "a100-unbatched", timeScale: 1, gateways: 1 },
  workload: (seed) => galileoWorkload(4000, seed, 1, 16),
  load: { mode: "stages", arrivals: "poisson", stages: [{ rate: 50, durationMs: 60_000 }] },
  policies: ["round_robin", "least_request", "global_least_request", "global_least_bytes", "global_least_tokens", "omniscient"],
  slo: { e2eMs: 5000 },
  maxWallMs: 120_000,
  parameters: { published: "38 A100s, 50 QPS, one request at a time: p99 -27% / -29% / -73% vs round robin for 500 / 1000 / 8000-token inputs (byte-size cost)" },
};

export const higress: LoadScenario = {
  kind: "load",
  name: "higress",
  description: "Higress (GenAI-Perf): 60 sessions x 5 rounds, 50 in / 200 out per round (x 0.25), concurrency 20, 4 pods with 4k-token KV.",
  topology: { pods: 4, profile: "llama-8b-h100", profileOverrides: { numGpuBlocks: 256 }, timeScale: 1, gateways: 1 },
  workload: (seed) => higressWorkload(seed, 60, 5, 0.25),
  load: { mode: "concurrency", concurrency: 20 },
  policies: ["round_robin", "least_request", "prefix_affinity", "prefix_cache", "global_least_request", "omniscient"],
  slo: { ttftMs: 250 },
  maxWallMs: 90_000,
  parameters: { published: "TTFT 240 -> 120 ms, prefix hit 40% -> 80%, 367 -> 419 tok/s" },
};

export const blog: LoadScenario = {
  kind: "load",
  name: "blog",
  description: "Blog: 5 system prompts (1024 tokens), question 64, output 64, closed loop at concurrency 32 (--concurrency 1 for TTFT).",
  topology: { pods: 4, profile: "llama-8b-h100", profileOverrides: { numGpuBlocks: 512, maxNumSeqs: 16 }, timeScale: 2, gateways: 1 },
  workload: (seed) => blogWorkload(500, seed),
  load: { mode: "concurrency", concurrency: 32 },
  policies: ["round_robin", "prefix_affinity", "prefix_cache", "endpoint_metrics", "omniscient"],
  slo: { ttftMs: 500 },
  maxWallMs: 60_000,
  parameters: { published: "concurrency 32: pure affinity 13.2 rps vs round robin 30.3 rps; TTFT -42% at concurrency 1" },
};
