// The stats envoy/README.md tells an operator to look for, and the label values the Grafana
// dashboard filters on, are ones the built plugin exports. grafana.test.ts checks the dashboard's
// metric names; a label value it filters on (`reason="prefix_hit"`) is not a name, and a renamed
// reason or policy would leave a panel empty without failing there. The series come from the
// plugin itself, configured with every WasmPlugin of envoy/higress/ (each policy's counters exist
// at 0 once configured), printed as Envoy's /stats/prometheus prints them after tag extraction
// (host-test/abi/metrics.ts). The `extraStatTags` both READMEs ask for are the tags the plugin
// writes (and the ones host-test extracts).
import fs from "node:fs";
import { expect, it } from "vitest";
import { TestHost } from "../../host-test/facade/index.js";
import { LLMLB_STAT_TAGS } from "../../host-test/abi/plugin-host.js";
import { wasmPluginConfigs, type Obj } from "./doc-configs.js";

type Labels = Record<string, string>;

/** Series the plugin exports under each configuration: metric name -> label sets. */
async function exportedSeries(): Promise<Map<string, Labels[]>> {
  const configs: Obj[] = [...wasmPluginConfigs().map((d) => d.config), { lb_policy: "header" }];
  const series = new Map<string, Labels[]>();
  for (const config of configs) {
    const lb = (config.lb_config ?? {}) as Obj;
    const redisClusters = lb.serviceFQDN ? [`outbound|${lb.servicePort}||${lb.serviceFQDN}`] : [];
    const h = await TestHost.create({ wasm: "build/ai-load-balancer.wasm", configuration: config, logLevel: "warn", redisClusters });
    try {
      expect(h.configured, JSON.stringify(config)).toEqual([true]);
      for (const m of h.plugin.metrics.prometheus().matchAll(/^([a-z_][a-z0-9_]*)\{([^}]*)\} /gm)) {
        const labels = Object.fromEntries([...m[2].matchAll(/([a-z_]+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
        series.set(m[1], [...(series.get(m[1]) ?? []), labels]);
      }
    } finally {
      h.close();
    }
  }
  return series;
}

/** Concrete `label="value"` matchers (equality only; Grafana variables and the scrape's own labels left out). */
function concreteMatchers(braces: string): Labels {
  return Object.fromEntries([...braces.matchAll(/([a-z_]+)="([^"$.]*)"/g)]
    .filter((m) => m[1] !== "namespace" && m[1] !== "pod")
    .map((m) => [m[1], m[2]]));
}

/** The label sets of a metric; a histogram is named by its base name or one of its series. */
function setsOf(metric: string, series: Map<string, Labels[]>): Labels[] | undefined {
  return series.get(metric) ?? series.get(`${metric}_bucket`) ?? series.get(metric.replace(/_(sum|count)$/, "_bucket"));
}

/**
 * `open`: the mention leaves labels out (`{policy="predicted_latency",...}`, read "by reason"), whose
 * counters appear with the first pick; its values must then be ones the plugin labels any series with.
 */
function problemsOf(where: string, metric: string, wanted: Labels, open: boolean, series: Map<string, Labels[]>): string[] {
  const sets = setsOf(metric, series);
  if (!sets) return [`${where}: ${metric} is not a stat the plugin exports`];
  const pool = open ? [...series.values()].flat() : sets;
  const ok = Object.keys(wanted).length === 0 || (open
    ? Object.entries(wanted).every(([k, v]) => pool.some((s) => s[k] === v))
    : pool.some((s) => Object.entries(wanted).every(([k, v]) => s[k] === v)));
  return ok ? [] : [`${where}: no ${metric} series with ${JSON.stringify(wanted)} (exported: ${sets.map((s) => JSON.stringify(s)).join(" ")})`];
}

it("envoy/README.md's stat names and label values, and the dashboard's label filters, are exported by the plugin", async () => {
  const series = await exportedSeries();
  const problems: string[] = [];
  let checked = 0;
  const readme = fs.readFileSync("envoy/README.md", "utf8");
  for (const m of readme.matchAll(/\b(llmlb_[a-z_]+)(\{[^}]*\})?/g)) {
    problems.push(...problemsOf("envoy/README.md", m[1], concreteMatchers(m[2] ?? ""), (m[2] ?? "").includes("..."), series));
    checked++;
  }
  const dash = JSON.parse(fs.readFileSync("envoy/grafana-dashboard.json", "utf8")) as Obj;
  for (const p of dash.panels as Obj[]) {
    for (const t of p.targets as Obj[]) {
      for (const m of (t.expr as string).matchAll(/\b(llmlb_[a-z_]+)\{([^}]*)\}/g)) {
        const wanted = concreteMatchers(m[2]);
        if (Object.keys(wanted).length === 0) continue;
        problems.push(...problemsOf(`dashboard "${p.title}"`, m[1], wanted, false, series));
        checked++;
      }
    }
  }
  expect(problems).toEqual([]);
  expect(checked).toBeGreaterThan(20);
});

it("the extraStatTags README.md and envoy/README.md ask for are the plugin's label names, and host-test's", async () => {
  const series = await exportedSeries();
  const labelNames = new Set([...series.values()].flat().flatMap((l) => Object.keys(l)).filter((k) => k !== "le"));
  expect([...labelNames].sort()).toEqual([...LLMLB_STAT_TAGS].sort());
  // A tag the gateway does not extract stays in the name ("tag=.=value;.;", sanitized to "___").
  expect([...series.keys()].filter((n) => n.includes("___"))).toEqual([]);
  const asked = (file: string) => [...fs.readFileSync(file, "utf8").matchAll(/extraStatTags:\s*\[([^\]]*)\]/g)].map((m) => m[1].split(",").map((t) => t.trim()).sort());
  for (const file of ["README.md", "envoy/README.md"]) {
    expect(asked(file).length, file).toBeGreaterThan(0);
    for (const tags of asked(file)) expect(tags, file).toEqual([...LLMLB_STAT_TAGS].sort());
  }
});
