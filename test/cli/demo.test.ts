// npm start's demo: the live per-pod view, the decisions read from the plugin's detail log, the
// footer's comparison wording, and one shortened demo run through real stacks (round robin, then
// the chosen policy) whose output shows pods, picks with reasons, both rows and the footer.
import { describe, expect, it } from "vitest";
import { demoFooter, runDemo } from "../../host-test/cli/demo.js";
import { parseDecision, renderDemoView } from "../../host-test/cli/demo-view.js";
import type { RunSummary } from "../../bench/metrics.js";

describe("demo view", () => {
  const pods = new Map([["127.0.0.1:4001", "pod-0"]]);

  it("reads a pick from the plugin's detail log line, naming the pod", () => {
    expect(parseDecision("[ai-load-balancer] picked 127.0.0.1:4001 reason=prefix_hit load=3 cost=1", pods)).toEqual({ pod: "pod-0", reason: "prefix_hit", load: "3" });
    expect(parseDecision("[ai-load-balancer] picked 10.0.0.9:80 reason=least_request load=0 cost=1", pods)?.pod).toBe("10.0.0.9:80");
    expect(parseDecision("[ai-load-balancer] configured: 1 load-balancing config(s)", pods)).toBeNull();
  });

  it("shows progress, one row per pod (in flight = running + queued, KV use, hit rate) and the last picks", () => {
    const lines = renderDemoView("2/2 prefix_cache", { done: 5, expected: 10, inFlight: 3, failed: 0, elapsedWallMs: 2000, expectedWallMs: 8000 },
      [{ name: "pod-0", running: 4, waiting: 2, kvUsage: 0.5, prefixQueriedTokens: 200, prefixHitTokens: 150, served: 7 }],
      [{ pod: "pod-0", reason: "prefix_hit", load: "3" }]);
    expect(lines[0]).toMatch(/^2\/2 prefix_cache \[#{10}\.{10}\] 5\/10 done, 3 in flight, 0 failed, 2 s/);
    expect(lines[2].split(/\s+/).filter(Boolean)).toEqual(["pod-0", "6", "2", "50%", "75%", "7"]);
    expect(lines[3]).toBe("  last picks: pod-0 prefix_hit load=3");
    expect(renderDemoView("1/2 round_robin", { done: 0, expected: 0, inFlight: 0, failed: 0, elapsedWallMs: 0, expectedWallMs: 0 }, [], null).at(-1)).toContain("plugin off");
  });

  it("footer: says lower/higher and better/worse from the numbers, then what the policy does", () => {
    const summary = (ttftP90: number, e2eP90: number, kv: number) => ({ ttftMs: { p90: ttftP90 }, e2eMs: { p90: e2eP90 }, kvHitRate: kv }) as unknown as RunSummary;
    const [line, story] = demoFooter("prefix_cache", summary(100, 1000, 0.8), summary(400, 1010, 0.2));
    expect(line).toContain("TTFT p90 4.0x lower (100 ms vs 400 ms, better)");
    expect(line).toContain("E2E p90 about the same");
    expect(line).toContain("KV-cache hits 80% vs 20%");
    expect(story).toMatch(/^prefix_cache /);
    expect(demoFooter("global_least_request", summary(600, 2000, 0.2), summary(400, 1000, 0.2))[0]).toContain("1.5x higher (600 ms vs 400 ms, worse)");
  });
});

it("a shortened demo compares the chosen policy with round robin and shows the plugin's picks", async () => {
  const lines: string[] = [];
  const runs = await runDemo({ policy: "global_least_request", log: (l) => lines.push(l), stages: [{ rate: 8, durationMs: 2000 }] });
  expect(runs.map((r) => r.policy)).toEqual(["round_robin", "global_least_request"]);
  for (const r of runs) {
    expect(r.summary.succeeded).toBeGreaterThan(0);
    expect(r.summary.failed).toBe(0);
  }
  const text = lines.join("\n");
  expect(text).toMatch(/^ {2}pod-7 /m);
  expect(text).toMatch(/last picks: pod-\d least_request load=\d+/);
  expect(text).toMatch(/^round_robin +\d+\/\d+/m);
  expect(text).toMatch(/^global_least_request +\d+\/\d+/m);
  expect(text).toContain("global_least_request against round robin in this run:");
  expect(text).toContain("Times are simulated ms");
}, 120_000);
