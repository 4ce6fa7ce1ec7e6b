// Plugin metrics (proxy_define_metric & co.) with Envoy's semantics: one registry per process,
// shared by all VMs, so a name defined twice (e.g. once per worker VM) yields the same id.
// Sources (Envoy): source/extensions/common/wasm/context.cc defineMetric / incrementMetric /
// recordMetric / getMetric (every plugin metric lives under the custom stat namespace
// `wasmcustom`, wasm.h CustomStatNamespace); source/server/admin/prometheus_stats.cc (the
// /stats/prometheus text); source/common/stats/tag_extractor_impl.cc (tag extraction: a stats_tags
// regex's first capture group is cut out of the name, its second is the tag's value).
// Labels: proxy-wasm SDKs write tags into the name, `tag=.=value;.;` before the metric name
// (proxy-wasm-cpp-sdk proxy_wasm_api.h MetricBase::prefixWithFields with Istio's separators), and
// Istio/Higress turn them into labels for every tag named in `extraStatTags` with the extractor
// `(tag=\.=(.*?);\.;)` (higress-group/istio tools/packaging/common/higress_envoy_bootstrap.json).
// Histograms: Envoy records into per-thread histograms and merges them into what the admin
// endpoint prints on the stats flush (stats_flush_interval, 5 s by default), so a value recorded
// now shows up only after `mergeHistograms()`; bucket bounds are Envoy's defaults. Envoy keeps
// them as circllhist log-linear bins (two significant digits) and prints approximations
// (source/common/stats/histogram_impl.cc: `_sum` is hist_approx_sum, bin midpoints; a bucket
// `le` counts hist_approx_count_below, the bins entirely at or below it), reproduced here: 40 ms
// adds 40.5 to the sum, and a value equal to a bound lands in the next bucket.
// Failure behaviour: statuses, never throws.
import { MetricType, WasmResult } from "./constants.js";

interface Metric {
  id: number;
  type: number;
  name: string;
  value: number;
  /** Histogram: merged (printed) observations, and those recorded since the last merge. */
  sum: number;
  count: number;
  buckets: number[];
  /** Observations recorded since the last merge, already binned: O(buckets) memory however many. */
  pending: HistogramTotals;
  /** Tag-extracted Prometheus name and labels (null: Envoy would not export it). */
  promName: string | null;
  tags: [string, string][];
}

interface HistogramTotals { sum: number; count: number; buckets: number[] }

// Envoy's default histogram bucket bounds (stats_config.histogram_bucket_settings default).
const DEFAULT_BUCKETS = [0.5, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 600000, 1800000, 3600000];
const CUSTOM_NAMESPACE = "wasmcustom.";
const TYPE_NAMES: Record<number, string> = { [MetricType.Counter]: "counter", [MetricType.Gauge]: "gauge", [MetricType.Histogram]: "histogram" };

/** What Envoy's /stats/prometheus shows for a custom metric: its name sanitized, or null (not exported). */
function promNameOf(extracted: string): string | null {
  if (!extracted.startsWith(CUSTOM_NAMESPACE)) return null;
  const name = extracted.slice(CUSTOM_NAMESPACE.length).replace(/[^a-zA-Z0-9_]/g, "_");
  return name.length === 0 || /^[0-9]/.test(name) ? null : name;
}

/** The circllhist bin of a recorded (unsigned integer) value: [lower, lower + width). */
function binOf(v: number): { lower: number; width: number } {
  if (v <= 0) return { lower: 0, width: 0 };
  const digits = String(Math.floor(v)).length;
  if (digits === 1) return { lower: Math.floor(v), width: 0.1 };
  const width = 10 ** (digits - 2);
  return { lower: Math.floor(v / width) * width, width };
}

/** fmt's `{:.32g}` (how Envoy prints bucket bounds and sums): 32 significant digits, trailing zeros dropped. */
function g32(x: number): string {
  if (Number.isInteger(x) && Math.abs(x) < 1e21) return String(x);
  const t = x.toPrecision(32);
  return t.includes("e") ? t : t.replace(/\.?0+$/, "");
}

const emptyTotals = (): HistogramTotals => ({ sum: 0, count: 0, buckets: DEFAULT_BUCKETS.map(() => 0) });

/** Bins one observation into `t` as the merge will print it (a gateway records millions between flushes). */
function addObservation(t: HistogramTotals, v: number): void {
  const { lower, width } = binOf(v);
  t.sum += lower + width / 2;
  t.count += 1;
  DEFAULT_BUCKETS.forEach((b, i) => { if (lower + width <= b) t.buckets[i]++; });
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export class MetricsRegistry {
  private byId = new Map<number, Metric>();
  private byName = new Map<string, Metric>();
  private nextIndex = 1;
  private readonly extractors: { tag: string; re: RegExp }[];

  /** `extraStatTags`: the tag names the gateway's bootstrap extracts Istio-style (Higress: meshConfig extraStatTags). */
  constructor(extraStatTags: readonly string[] = []) {
    this.extractors = extraStatTags.map((tag) => ({ tag, re: new RegExp(`(${escapeRegex(tag)}=\\.=(.*?);\\.;)`) }));
  }

  /** Envoy encodes the metric type in the low 2 bits of the id. */
  define(type: number, name: string): { status: number; id: number } {
    if (type !== MetricType.Counter && type !== MetricType.Gauge && type !== MetricType.Histogram) {
      return { status: WasmResult.BadArgument, id: 0 };
    }
    const existing = this.byName.get(name);
    if (existing) return { status: WasmResult.Ok, id: existing.id };
    const id = (this.nextIndex++ << 2) | type;
    const { promName, tags } = this.extract(CUSTOM_NAMESPACE + name);
    const m: Metric = { id, type, name, value: 0, sum: 0, count: 0, buckets: DEFAULT_BUCKETS.map(() => 0), pending: emptyTotals(), promName, tags };
    this.byId.set(id, m);
    this.byName.set(name, m);
    return { status: WasmResult.Ok, id };
  }

  /** Tag extraction: every matching extractor contributes a tag and cuts its first group out of the name. */
  private extract(full: string): { promName: string | null; tags: [string, string][] } {
    const tags: [string, string][] = [];
    const cut: [number, number][] = [];
    for (const { tag, re } of this.extractors) {
      const m = re.exec(full);
      if (!m) continue;
      tags.push([tag, m[2]]);
      cut.push([m.index, m.index + m[1].length]);
    }
    let extracted = "";
    let at = 0;
    for (const [from, to] of cut.sort((a, b) => a[0] - b[0])) {
      if (from > at) extracted += full.slice(at, from);
      at = Math.max(at, to);
    }
    extracted += full.slice(at);
    return { promName: promNameOf(extracted), tags };
  }

  /** Counters only go up (an offset of 0 or less is BadArgument: Envoy context.cc incrementMetric
   *  takes `offset > 0` only); gauges move both ways. */
  increment(id: number, offset: number): number {
    const m = this.byId.get(id);
    if (!m) return WasmResult.NotFound;
    if (m.type === MetricType.Counter) {
      if (!(offset > 0)) return WasmResult.BadArgument;
      m.value += offset;
      return WasmResult.Ok;
    }
    if (m.type === MetricType.Gauge) { m.value += offset; return WasmResult.Ok; }
    return WasmResult.BadArgument;
  }

  /** Counter: add; gauge: set; histogram: record one observation (printed after the next merge). */
  record(id: number, value: number): number {
    const m = this.byId.get(id);
    if (!m) return WasmResult.NotFound;
    if (m.type === MetricType.Counter) m.value += value;
    else if (m.type === MetricType.Gauge) m.value = value;
    else addObservation(m.pending, value);
    return WasmResult.Ok;
  }

  /** Envoy's stats flush: histogram observations recorded so far become visible. */
  mergeHistograms(): void {
    for (const m of this.byId.values()) {
      if (m.type !== MetricType.Histogram || m.pending.count === 0) continue;
      m.sum += m.pending.sum;
      m.count += m.pending.count;
      m.pending.buckets.forEach((n, i) => { m.buckets[i] += n; });
      m.pending = emptyTotals();
    }
  }

  /** Histograms cannot be read back through the ABI (Envoy returns BadArgument). */
  get(id: number): { status: number; value: number } {
    const m = this.byId.get(id);
    if (!m) return { status: WasmResult.NotFound, value: 0 };
    if (m.type === MetricType.Histogram) return { status: WasmResult.BadArgument, value: 0 };
    return { status: WasmResult.Ok, value: m.value };
  }

  /**
   * Value for tests: by the name the plugin defined, or by the exported Prometheus name and labels
   * (all of them). Counter/gauge value, histogram {count, sum} as merged.
   */
  valueOf(name: string, labels?: Record<string, string>): number | { count: number; sum: number } | undefined {
    const m = labels === undefined && this.byName.has(name) ? this.byName.get(name) : this.findSeries(name, labels ?? {});
    if (!m) return undefined;
    return m.type === MetricType.Histogram ? { count: m.count, sum: m.sum } : m.value;
  }

  private findSeries(promName: string, labels: Record<string, string>): Metric | undefined {
    const want = Object.entries(labels).sort().join("\n");
    for (const m of this.byId.values()) {
      if (m.promName === promName && [...m.tags].sort().join("\n") === want) return m;
    }
    return undefined;
  }

  /** The /stats/prometheus text of these metrics as Envoy prints it (prometheus_stats.cc). */
  prometheus(): string {
    let out = "";
    for (const type of [MetricType.Counter, MetricType.Gauge, MetricType.Histogram]) {
      const groups = new Map<string, Metric[]>();
      for (const m of this.byId.values()) {
        if (m.type !== type || m.promName === null) continue;
        groups.set(m.promName, [...(groups.get(m.promName) ?? []), m]);
      }
      for (const name of [...groups.keys()].sort()) {
        out += `# TYPE ${name} ${TYPE_NAMES[type]}\n`;
        for (const m of groups.get(name)!.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) out += this.series(name, m);
        out += "\n";
      }
    }
    return out;
  }

  private series(name: string, m: Metric): string {
    const tags = m.tags.map(([k, v]) => `${k.replace(/[^a-zA-Z0-9_]/g, "_")}="${v}"`).join(",");
    if (m.type !== MetricType.Histogram) return `${name}{${tags}} ${m.value}\n`;
    const le = tags.length > 0 ? tags + "," : "";
    let s = "";
    DEFAULT_BUCKETS.forEach((b, i) => { s += `${name}_bucket{${le}le="${g32(b)}"} ${m.buckets[i]}\n`; });
    return s + `${name}_bucket{${le}le="+Inf"} ${m.count}\n${name}_sum{${tags}} ${g32(m.sum)}\n${name}_count{${tags}} ${m.count}\n`;
  }
}
