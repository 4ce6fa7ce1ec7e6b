// Final pickers and the shed rule of endpoint_metrics: among survivors, the fewest in flight
// (metrics lag; in-flight counts do not); metric_policy least / most as a band on the gauge.
// Inputs: host views. Pure (no host calls).
import { SHED_NEVER } from "../../config/metrics_settings";
import { HostView } from "../../services/metrics_view/host_view";
import { PRIORITY_HIGH, PRIORITY_LOW } from "../../services/request/request";
import { allIndices, highestBand, lowestBand } from "./bands";

/** Every host is saturated: is a request of this priority shed (else placed on the least bad)? */
export function mustShed(priority: i32, mode: string): bool {
  if (priority == PRIORITY_HIGH || mode == SHED_NEVER) return false;
  return mode == "normal" || priority == PRIORITY_LOW;
}

export function lowestInflight(views: HostView[]): i32[] {
  return fewestInflight(views, allIndices(views.length));
}

/** The indices among `indices` whose host has the fewest requests in flight; all of `indices` when
 *  none compares (a NaN count: the caller indexes the result, which must not be empty). */
export function fewestInflight(views: HostView[], indices: i32[]): i32[] {
  let lo = Infinity;
  for (let i = 0; i < indices.length; i++) lo = min(lo, max(views[indices[i]].inflight, 0.0));
  const out = new Array<i32>();
  for (let i = 0; i < indices.length; i++) if (max(views[indices[i]].inflight, 0.0) == lo) out.push(indices[i]);
  return out.length > 0 ? out : indices;
}

/** metric_policy least / most: Higress's band on target_metric; hosts without the gauge are skipped. */
export function gaugeBand(views: HostView[], most: bool): i32[] {
  const values = new Array<f64>(views.length);
  for (let i = 0; i < views.length; i++) values[i] = views[i].hasMetrics() ? views[i].gauge : NaN;
  const all = allIndices(views.length);
  return most ? highestBand(all, values) : lowestBand(all, values, false);
}
