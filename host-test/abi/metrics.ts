// Plugin metrics (proxy_define_metric & co.) with Envoy's semantics: one registry per process,
// shared by all VMs, so a name defined twice (e.g. once per worker VM) yields the same id.
// Source: Envoy source/extensions/common/wasm/context.cc defineMetric/incrementMetric/recordMetric/
// getMetric. Failure behaviour: statuses, never throws.
import { MetricType, WasmResult } from "./constants.js";

interface Metric {
  id: number;
  type: number;
  name: string;
  value: number;
  /** Histogram observations (bounded sample for the exposition). */
  sum: number;
  count: number;
  buckets: number[];
}

// Envoy's default histogram bucket bounds (stats_config.histogram_bucket_settings default).
const DEFAULT_BUCKETS = [0.5, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 600000, 1800000, 3600000];

export class MetricsRegistry {
  private byId = new Map<number, Metric>();
  private byName = new Map<string, Metric>();
  private nextIndex = 1;

  /** Envoy encodes the metric type in the low 2 bits of the id. */
  define(type: number, name: string): { status: number; id: number } {
    if (type !== MetricType.Counter && type !== MetricType.Gauge && type !== MetricType.Histogram) {
      return { status: WasmResult.BadArgument, id: 0 };
    }
    const existing = this.byName.get(name);
    if (existing) return { status: WasmResult.Ok, id: existing.id };
    const id = (this.nextIndex++ << 2) | type;
    const m: Metric = { id, type, name, value: 0, sum: 0, count: 0, buckets: DEFAULT_BUCKETS.map(() => 0) };
    this.byId.set(id, m);
    this.byName.set(name, m);
    return { status: WasmResult.Ok, id };
  }

  /** Counters only go up (a negative offset is BadArgument); gauges move both ways. */
  increment(id: number, offset: number): number {
    const m = this.byId.get(id);
    if (!m) return WasmResult.NotFound;
    if (m.type === MetricType.Counter) {
      if (offset < 0) return WasmResult.BadArgument;
      m.value += offset;
      return WasmResult.Ok;
    }
    if (m.type === MetricType.Gauge) { m.value += offset; return WasmResult.Ok; }
    return WasmResult.BadArgument;
  }

  /** Counter: add; gauge: set; histogram: record one observation. */
  record(id: number, value: number): number {
    const m = this.byId.get(id);
    if (!m) return WasmResult.NotFound;
    if (m.type === MetricType.Counter) m.value += value;
    else if (m.type === MetricType.Gauge) m.value = value;
    else {
      m.sum += value;
      m.count += 1;
      DEFAULT_BUCKETS.forEach((b, i) => { if (value <= b) m.buckets[i]++; });
    }
    return WasmResult.Ok;
  }

  /** Histograms cannot be read back through the ABI (Envoy returns BadArgument). */
  get(id: number): { status: number; value: number } {
    const m = this.byId.get(id);
    if (!m) return { status: WasmResult.NotFound, value: 0 };
    if (m.type === MetricType.Histogram) return { status: WasmResult.BadArgument, value: 0 };
    return { status: WasmResult.Ok, value: m.value };
  }

  /** Value by name for tests: counter/gauge value, or histogram {count,sum}. */
  valueOf(name: string): number | { count: number; sum: number } | undefined {
    const m = this.byName.get(name);
    if (!m) return undefined;
    return m.type === MetricType.Histogram ? { count: m.count, sum: m.sum } : m.value;
  }

  /**
   * Prometheus text exposition. Envoy strips its `wasmcustom.` scope for plugin metrics, so the
   * plugin's own name is used, with characters outside [a-zA-Z0-9_:] replaced by `_`.
   */
  prometheus(): string {
    const lines: string[] = [];
    for (const m of this.byId.values()) {
      const name = m.name.replace(/[^a-zA-Z0-9_:]/g, "_");
      if (m.type === MetricType.Histogram) {
        lines.push(`# TYPE ${name} histogram`);
        DEFAULT_BUCKETS.forEach((b, i) => lines.push(`${name}_bucket{le="${b}"} ${m.buckets[i]}`));
        lines.push(`${name}_bucket{le="+Inf"} ${m.count}`, `${name}_sum ${m.sum}`, `${name}_count ${m.count}`);
      } else {
        lines.push(`# TYPE ${name} ${m.type === MetricType.Counter ? "counter" : "gauge"}`, `${name} ${m.value}`);
      }
    }
    return lines.length ? lines.join("\n") + "\n" : "";
  }
}
