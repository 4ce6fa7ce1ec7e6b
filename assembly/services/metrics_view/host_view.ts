// What the picker knows about one candidate host at decision time (pure data, no host calls):
// the last parsed engine metrics (or none), whether they are fresh, the fleet's in-flight count
// for the host, this host's latency estimate, and the user-selected gauge (least/most).
// `effectiveWaiting` and `kvUsage` correct stale scrapes: requests sent since the scrape are not
// in the server's numbers yet, so in-flight beyond running + waiting is counted as waiting, and
// the KV use is scaled up in proportion.
import { EngineMetrics } from "../../metrics/engine_metrics";

export class HostView {
  /** Parsed metrics; null when the host never reported usable metrics. */
  metrics: EngineMetrics | null = null;
  /** Metrics younger than staleAfterMs (poll) / present and valid (health_check). */
  fresh: bool = false;
  /** In-flight requests on this host seen by the fleet (Redis) or this VM, -1 when unknown. */
  inflight: f64 = -1;
  /** Latency EWMA in ms, NaN when not observed yet. */
  latencyMs: f64 = NaN;
  /** target_metric value for least/most, NaN when absent. */
  gauge: f64 = NaN;
  /** Share of this request's prefix the host already served (prefix_signal.ts), 0 when unknown. */
  prefixScore: f64 = 0;

  constructor(public address: string) {}

  /** Metrics usable for scoring: present, valid and fresh. */
  hasMetrics(): bool {
    const m = this.metrics;
    return this.fresh && m !== null && m.valid;
  }

  /** Waiting requests, corrected by in-flight requests the last scrape could not see yet. */
  effectiveWaiting(): f64 {
    const inflight = max(this.inflight, 0.0);
    if (!this.hasMetrics()) return inflight;
    const m = this.metrics!;
    return m.waiting + max(0.0, inflight - (m.running + m.waiting));
  }

  /** KV-cache use, scaled up by the in-flight requests the scrape could not see yet (each
   *  request holds about the same share of the cache as the ones the server reported). */
  kvUsage(): f64 {
    if (!this.hasMetrics()) return 0;
    const m = this.metrics!;
    if (!m.hasKv) return 0;
    const seen = m.running + m.waiting;
    const unseen = max(this.inflight, 0.0) - seen;
    if (unseen <= 0 || seen <= 0) return m.kvUsage;
    return min(1.0, m.kvUsage * (seen + unseen) / seen);
  }

  /** Adapter running on the server (vLLM running_lora_adapters). */
  runsAdapter(adapter: string): bool {
    return this.hasMetrics() && this.metrics!.runningLora.includes(adapter);
  }

  waitsForAdapter(adapter: string): bool {
    return this.hasMetrics() && this.metrics!.waitingLora.includes(adapter);
  }

  /** Room to load one more adapter: fewer running adapters than max_lora. */
  canLoadAdapter(): bool {
    if (!this.hasMetrics()) return false;
    const m = this.metrics!;
    return m.runningLora.length < m.maxLora;
  }
}
