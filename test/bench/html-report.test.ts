// report.html: one self-contained page per run (opened from disk: no script, stylesheet, image or
// font fetched), holding the run's Markdown tables as HTML tables and every chart inline; the
// pages committed in bench/results/ are exactly what their report.md and charts give.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { reportHtml, reportHtmlFromDir } from "../../bench/html-report.js";

const MD = `## demo <x>

| policy | TTFT p90 | KV hit |
|---|---:|---:|
| round_robin | 448 | 18.7% |
| prefix_cache | 93.6 | 83.3% |

- a note
`;
const SVG = `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>`;

describe("report.html", () => {
  it("renders the tables and inlines the charts, with nothing to fetch", () => {
    const html = reportHtml("demo & co", MD, { "b.svg": SVG, "a.svg": SVG.replace('width="10" height="10"><rect', 'width="10" height="10"><circle') });
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain("<title>demo &amp; co</title>");
    expect(html.match(/<tr>/g)).toHaveLength(3);
    expect(html).toMatch(/<td[^>]*>prefix_cache<\/td>\s*<td[^>]*>93.6<\/td>/);
    expect(html).toContain("&lt;x&gt;");
    expect(html.match(/<svg /g)).toHaveLength(2);
    expect(html).not.toContain("<?xml");
    expect(html.indexOf("<circle")).toBeLessThan(html.indexOf("<rect")); // charts in file-name order
    expect(html).not.toMatch(/<script|<link|<img|src=|@import|url\(/i);
  });

  it("is committed beside every result in bench/results/, matching its report.md and charts", () => {
    const dirs = fs.readdirSync("bench/results", { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => path.join("bench/results", d.name));
    expect(dirs.length).toBeGreaterThan(0);
    for (const dir of dirs) {
      expect(fs.readFileSync(path.join(dir, "report.html"), "utf8"), `${dir}: npx tsx bench/html-report.ts ${dir}`).toBe(reportHtmlFromDir(dir));
    }
  });
});
