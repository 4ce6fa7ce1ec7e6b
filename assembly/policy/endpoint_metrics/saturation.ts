// Saturation of a host (GIE's saturation detector, per host): max(waiting / queueLimit,
// kv / kvLimit) >= 1, with the limits scaled by `fraction` (low priority is shed earlier, at
// lb_config.lowPriorityFraction of the limits). A limit of 0 disables its term.
// Stale hosts: with stalePolicy "saturated" a host without fresh metrics counts as saturated, but
// only while some other candidate has fresh metrics — if none has (no health check on /metrics,
// scraper down), saturation is unknown and nothing is shed for it. Pure.
import { MetricsSettings, STALE_SATURATED } from "../../config/metrics_settings";
import { HostView } from "../../services/metrics_view/host_view";

export function saturationLevel(v: HostView, s: MetricsSettings, fraction: f64): f64 {
  let level: f64 = 0;
  const f = fraction > 0 ? fraction : 1.0;
  if (s.queueLimit > 0) level = max(level, v.effectiveWaiting() / (s.queueLimit * f));
  if (s.kvLimit > 0) level = max(level, v.kvUsage() / (s.kvLimit * f));
  return level;
}

export function anyFresh(views: HostView[]): bool {
  for (let i = 0; i < views.length; i++) if (views[i].hasMetrics()) return true;
  return false;
}

export function isSaturated(v: HostView, s: MetricsSettings, fraction: f64, someFresh: bool): bool {
  if (!v.hasMetrics()) return someFresh && s.stalePolicy == STALE_SATURATED;
  return saturationLevel(v, s, fraction) >= 1.0;
}

/** Indices of the hosts that are not saturated (empty when all are). */
export function unsaturated(views: HostView[], s: MetricsSettings, fraction: f64): i32[] {
  const someFresh = anyFresh(views);
  const out = new Array<i32>();
  for (let i = 0; i < views.length; i++) if (!isSaturated(views[i], s, fraction, someFresh)) out.push(i);
  return out;
}
