// Per candidate, what endpoint_metrics knows about it (a HostView): the cached parsed metrics and
// their freshness, the target gauge, the fleet's in-flight count, the latency EWMA.
// Inputs: candidates, the pool, the host snapshot (health_check source). Never throws.
import { LbConfig } from "../../config/lb_config";
import { SOURCE_POLL } from "../../config/metrics_settings";
import * as host from "../../host/calls";
import { CandidateSet } from "../../services/candidates/candidates";
import { HostSnapshot } from "../../services/candidates/upstream_hosts";
import { HostView } from "../../services/metrics_view/host_view";
import { MetricsCache } from "../../services/metrics_view/metrics_cache";
import { LbRequest } from "../../services/request/request";
import { Services } from "../../services/services";
import { MetricsRuntime } from "../../services/metrics_view/runtime";

export function hostViews(cfg: LbConfig, r: LbRequest, c: CandidateSet, cache: MetricsCache, runtime: MetricsRuntime, sv: Services): HostView[] {
  const now = host.nowMillis();
  const snapshot: HostSnapshot | null = cfg.metrics.source == SOURCE_POLL ? null : sv.candidates.snapshot();
  const views = new Array<HostView>(c.size);
  for (let i = 0; i < c.size; i++) {
    const address = c.hosts[i];
    const v = new HostView(address);
    const report = cache.report(address, snapshot, now);
    if (report !== null) {
      v.metrics = report.metrics;
      v.gauge = report.gauge;
      v.fresh = cache.isFresh(report, now);
    }
    v.inflight = runtime.inflight.inflight(r.pool, address, sv.accounting.local);
    v.latencyMs = runtime.latency.latencyMs(address);
    views[i] = v;
  }
  return views;
}
