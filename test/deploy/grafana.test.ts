// envoy/grafana-dashboard.json: valid dashboard JSON whose every query names only metrics the
// built plugin defines (read from the metrics registry after the plugin starts, so a renamed or
// removed stat breaks this test), counters only through rate()/increase().
import fs from "node:fs";
import { expect, it } from "vitest";
import { TestHost } from "../../host-test/facade/index.js";

type Obj = Record<string, any>;
const PROMQL_WORDS = new Set(["sum", "by", "without", "rate", "increase", "irate", "clamp_min", "clamp_max", "avg", "max", "min", "histogram_quantile", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset"]);

/** Metric names the plugin defines, with their Prometheus type, as the gateway exposes them. */
async function definedMetrics(): Promise<Map<string, string>> {
  const h = await TestHost.create({ wasm: "build/ai-load-balancer.wasm", configuration: { lb_policy: "header" }, logLevel: "warn" });
  try {
    expect(h.configured).toEqual([true]);
    const types = new Map<string, string>();
    for (const m of h.plugin.metrics.prometheus().matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(m[1], m[2]);
    return types;
  } finally {
    h.close();
  }
}

/** Metric names in a PromQL expression: identifiers left after removing matchers, ranges, groupings, strings and functions. */
function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, " ")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  return [...stripped.replace(/(?<![\w:])\d+(?:\.\d+)?(?:e[-+]?\d+)?/gi, " ").matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)]
    .filter((m) => m[2] === undefined && !PROMQL_WORDS.has(m[1]))
    .map((m) => m[1]);
}

it("every dashboard query names only metrics the plugin defines; counters are read through rate() or increase()", async () => {
  const dash = JSON.parse(fs.readFileSync("envoy/grafana-dashboard.json", "utf8")) as Obj;
  expect(dash.title).toBeTruthy();
  expect(dash.uid).toMatch(/^[a-z0-9-]{1,40}$/);
  const defined = await definedMetrics();
  expect(defined.size).toBeGreaterThan(0);
  const exprs = (dash.panels as Obj[]).flatMap((p) => (p.targets as Obj[]).map((t) => ({ panel: p.title as string, expr: t.expr as string })));
  expect(exprs.length).toBeGreaterThanOrEqual(defined.size);
  const used = new Set<string>();
  for (const { panel, expr } of exprs) {
    const names = metricNames(expr);
    expect(names.length, `${panel}: ${expr}`).toBeGreaterThan(0);
    for (const n of names) {
      expect(defined.has(n), `${panel}: ${n} is not a metric the plugin defines (${[...defined.keys()].join(", ")})`).toBe(true);
      if (defined.get(n) === "counter") expect(expr, `${panel}: counter ${n} outside rate()/increase()`).toMatch(new RegExp(`(rate|increase)\\(${n}\\b`));
      used.add(n);
    }
  }
  expect([...defined.keys()].filter((n) => !used.has(n)), "plugin metrics the dashboard does not show").toEqual([]);
});

it("the PromQL name extractor finds metrics and skips functions, labels, ranges and numbers", () => {
  expect(metricNames('sum by (pod) (rate(a_total{namespace=~"x"}[5m])) / clamp_min(b, 1e-9)')).toEqual(["a_total", "b"]);
});
