// report.html beside a run's report.md: one self-contained page (no server, no network: inline
// style, the Markdown tables rendered to HTML by `marked`, every chart inlined as <svg>), built
// from exactly what the directory holds, so the page and the Markdown never disagree.
// `tsx bench/html-report.ts <dir>...` (re)writes report.html in result directories written
// before this existed (bench/results/*). Failure behaviour: a directory without report.md throws.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Marked } from "marked";

const STYLE = `body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:14px}th,td{border:1px solid #ccc;padding:4px 8px}
th{background:#f3f3f3}td:not(:first-child){text-align:right}tr:nth-child(even){background:#fafafa}
.charts{display:flex;flex-wrap:wrap;gap:12px}.charts svg{max-width:100%;height:auto;border:1px solid #eee}
footer{color:#777;font-size:12px;margin-top:2em}`;

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

// Raw HTML in the Markdown (a description saying "<10 s") is shown as text, never interpreted.
const markdownToHtml = new Marked({ renderer: { html: ({ text }) => escapeHtml(text) } });

/** The page for one run: its Markdown report and its charts (file name -> SVG text). */
export function reportHtml(title: string, markdown: string, svgs: Record<string, string>): string {
  const charts = Object.keys(svgs).sort().map((name) =>
    `<figure>${svgs[name].replace(/^<\?xml[^>]*>\s*/, "")}<figcaption>${escapeHtml(name)}</figcaption></figure>`).join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>
${markdownToHtml.parse(markdown, { async: false })}
<h2>Charts</h2>
<div class="charts">
${charts}
</div>
<footer>Written by npm run bench (bench/html-report.ts). Times are simulated ms; rates per simulated second.</footer>
</body></html>
`;
}

/** report.html from a result directory's report.md and *.svg files. */
export function reportHtmlFromDir(dir: string): string {
  const markdown = fs.readFileSync(path.join(dir, "report.md"), "utf8");
  const svgs = Object.fromEntries(fs.readdirSync(dir).filter((f) => f.endsWith(".svg")).map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8")]));
  return reportHtml(path.basename(dir), markdown, svgs);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const dir of process.argv.slice(2)) {
    fs.writeFileSync(path.join(dir, "report.html"), reportHtmlFromDir(dir));
    console.log(path.join(dir, "report.html"));
  }
}
