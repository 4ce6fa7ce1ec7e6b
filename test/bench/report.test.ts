// Reports: SVG charts are well-formed and escaped, the Markdown table has one row per policy,
// checkProblems flags what CI must fail on, and writeReport puts every file on disk.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { summarize } from "../../bench/metrics.js";
import { charts, checkProblems, markdownTable, writeReport, type ScenarioReport } from "../../bench/report.js";
import { barChart, groupedBarChart, niceCeiling } from "../../bench/svg-chart.js";
import type { RequestRecord } from "../../bench/loadgen.js";

/** Minimal XML well-formedness: balanced tags, quoted attributes, only known entities in text. */
function assertWellFormed(svg: string): void {
  const body = svg.replace(/^<\?xml[^>]*\?>\s*/, "");
  const stack: string[] = [];
  const tag = /<(\/?)([a-zA-Z][\w-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/y;
  let i = 0;
  while (i < body.length) {
    const lt = body.indexOf("<", i);
    const text = lt < 0 ? body.slice(i) : body.slice(i, lt);
    expect(text.replace(/&(amp|lt|gt|quot|apos);/g, "")).not.toMatch(/[&>]/);
    if (lt < 0) break;
    tag.lastIndex = lt;
    const m = tag.exec(body);
    expect(m, `bad tag at ${body.slice(lt, lt + 40)}`).not.toBeNull();
    const [, close, name, , selfClose] = m!;
    if (close) expect(stack.pop()).toBe(name);
    else if (!selfClose) stack.push(name);
    i = tag.lastIndex;
  }
  expect(stack).toEqual([]);
}

function rec(pod: string, ttftMs: number): RequestRecord {
  return { session: "s", turn: 0, group: 0, gateway: 0, pod, status: 200, ok: true, error: null, startMs: 0, ttftMs, e2eMs: 500, itlMs: [], outputTokens: 5, promptTokens: 10, cachedTokens: 5 };
}

function report(): ScenarioReport {
  return {
    scenario: "demo", description: "d", startedAt: "2025-01-01T00:00:00.000Z", parameters: {}, slo: null, notes: ["a note"],
    runs: [
      { policy: "round_robin", description: "rr", summary: summarize([rec("pod-0", 100), rec("pod-1", 300)], 1000) },
      { policy: "prefix_cache", description: "pc", summary: summarize([rec("pod-0", 50), rec("pod-0", 70)], 1000, null, ["pod-0", "pod-1"]) },
      { policy: "omniscient", description: "o", skipped: "gateway failed" },
    ],
  };
}

describe("SVG charts", () => {
  it("are well-formed, escape labels, and scale bars to a readable maximum", () => {
    const svg = barChart(`<p90> & "friends"`, "ms", [{ label: "a<b", value: 37 }, { label: "c&d", value: 12.5 }]);
    assertWellFormed(svg);
    expect(svg).toContain("&lt;p90&gt; &amp; &quot;friends&quot;");
    expect(svg).not.toContain("a<b");
    expect(svg.match(/<rect [^>]*fill="#/g)).toHaveLength(2);
    expect(niceCeiling(37)).toBe(50);
    expect(niceCeiling(0)).toBe(1);
    expect(niceCeiling(100)).toBe(100);
  });

  it("draws grouped bars with a legend, and an empty chart without data", () => {
    const svg = groupedBarChart("spread", "requests", [
      { label: "rr", bars: [{ label: "pod-0", value: 3 }, { label: "pod-1", value: 4 }] },
      { label: "pc", bars: [{ label: "pod-0", value: 7 }, { label: "pod-1", value: 0 }] },
    ]);
    assertWellFormed(svg);
    expect(svg.match(/<title>/g)).toHaveLength(4);
    expect(svg).toContain(">pod-1</text>");
    assertWellFormed(barChart("empty", "x", []));
  });

  it("every chart of a report is well-formed", () => {
    const all = charts(report());
    expect(Object.keys(all).sort()).toEqual(["kv-hit.svg", "pod-spread.svg", "throughput.svg", "ttft-p90.svg"]);
    for (const svg of Object.values(all)) assertWellFormed(svg);
  });
});

describe("Markdown and files", () => {
  it("has one row per policy, skipped ones marked, notes listed", () => {
    const md = markdownTable(report());
    expect(md).toMatch(/\| round_robin \| 2 \/ 2 \| 200 \| 280 \|/); // p50 200, p90 280
    expect(md).toContain("| omniscient | skipped: gateway failed |");
    expect(md).toContain("- a note");
  });

  it("shows no latency for a policy without a successful request (not 0 ms)", () => {
    const failed = { ...rec("pod-0", 0), ok: false, status: 503, error: "status 503", ttftMs: null, outputTokens: 0 };
    const r = { ...report(), runs: [{ policy: "random" as const, description: "r", summary: summarize([failed], 1000) }] };
    expect(markdownTable(r)).toContain("| random | 0 / 1 | - | - | - | - | - | 0.00 |");
  });

  it("checkProblems flags skipped policies and failed requests", () => {
    expect(checkProblems(report())).toEqual(["omniscient: skipped (gateway failed)"]);
  });

  it("writes JSON, Markdown and SVGs into one directory", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "bench-report-"));
    try {
      const out = writeReport(report(), root);
      expect(out.files.map((f) => path.basename(f)).sort()).toEqual(["kv-hit.svg", "pod-spread.svg", "report.html", "report.json", "report.md", "throughput.svg", "ttft-p90.svg"]);
      expect(JSON.parse(fs.readFileSync(path.join(out.dir, "report.json"), "utf8")).runs).toHaveLength(3);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
