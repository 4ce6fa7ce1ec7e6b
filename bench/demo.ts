// The short demo `npm start` ends with: a shortened llm-d "many system prompts" load (llmd-73 at
// 16 then 32 req/s, 8 s simulated each; its own pods, Redis and gateway on free ports, ~30 s wall)
// comparing Envoy's round robin and per-gateway least request with the plugin's
// global_least_request and prefix_cache, logged as a Markdown table.
// Failure behaviour: a policy that cannot start shows as skipped in the table.
import { markdownTable } from "./report.js";
import { runLoadScenario } from "./run-scenario.js";
import { llmd73 } from "./scenarios/llmd.js";
import type { LoadScenario } from "./scenarios/types.js";

export const demoScenario: LoadScenario = {
  ...llmd73,
  name: "demo",
  description: "npm start demo: llmd-73 shortened to 16 -> 32 req/s, 8 s simulated each.",
  load: { mode: "stages", arrivals: "poisson", stages: [16, 32].map((rate) => ({ rate, durationMs: 8_000 })) },
  policies: ["round_robin", "least_request", "global_least_request", "prefix_cache"],
  maxWallMs: 40_000,
};

export async function runDemo(opts: { log(line: string): void }): Promise<void> {
  opts.log("demo: 8 simulated pods, many shared system prompts, 16 -> 32 req/s; each policy in turn (~30 s each)...");
  const report = await runLoadScenario(demoScenario, { quiet: true });
  for (const line of markdownTable(report).trimEnd().split("\n")) opts.log(line);
  opts.log("TTFT and KV hit: prefix_cache keeps each system prompt's KV cache in use; the others recompute it.");
}
