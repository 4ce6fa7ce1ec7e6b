// The short demo `npm start` ends with: the smoke scenario (its own pods, Redis and gateway on free
// ports, a few seconds) comparing round robin, prefix_cache and the omniscient bound, logged as a
// Markdown table. Failure behaviour: a policy that cannot start shows as skipped in the table.
import { markdownTable } from "./report.js";
import { runLoadScenario } from "./run-scenario.js";
import { smoke } from "./scenarios/smoke.js";

export async function runDemo(opts: { log(line: string): void }): Promise<void> {
  opts.log("demo: comparing policies on a small multi-turn shared-prefix load (npm run bench -- --list for more)...");
  const report = await runLoadScenario(smoke, { quiet: true });
  for (const line of markdownTable(report).trimEnd().split("\n")) opts.log(line);
}
