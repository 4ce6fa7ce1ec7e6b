// metric_policy: default — the early filter tree of the Gateway API Inference Extension that
// Higress runs, with its constants taken from settings (Higress hard-codes 50, 5 and 0.8):
//   normal/high priority ("critical" in GIE; Higress treats every request so):
//     hosts with waiting < loraQueueThreshold?
//       yes: those running the adapter, else those that can load it, else all of them
//            -> least-queue band -> least-KV band
//       no:  least-queue band -> (running the adapter or can load it, else all) -> least-KV band
//   low priority ("sheddable"): hosts with waiting <= queueThreshold and KV <= kvThreshold
//       -> least-queue band -> LoRA as above -> least-KV band; none -> empty (shed; under
//       shedWhenSaturated: never the caller runs the normal tree instead).
// Bands: see bands.ts. Waiting is HostView.effectiveWaiting() (scrape + unseen in-flight).
// Deliberate difference: with no adapter (adapter == "") the LoRA steps are skipped; Higress
// applies "can load an adapter" to base-model requests too, which only adds noise.
// Input: views, adapter, whether the request is sheddable, settings. Output: surviving indices
// (the caller picks one at random); empty only for a sheddable request with no capacity. Pure.
import { MetricsSettings } from "../../config/metrics_settings";
import { HostView } from "../../services/metrics_view/host_view";
import { allIndices, lowestBand } from "./bands";

class Signals {
  waiting: f64[];
  kv: f64[];
  constructor(views: HostView[]) {
    const n = views.length;
    this.waiting = new Array<f64>(n);
    this.kv = new Array<f64>(n);
    for (let i = 0; i < n; i++) {
      this.waiting[i] = views[i].effectiveWaiting();
      this.kv[i] = views[i].kvUsage();
    }
  }
}

function runningAdapter(views: HostView[], indices: i32[], adapter: string): i32[] {
  const out = new Array<i32>();
  for (let i = 0; i < indices.length; i++) if (views[indices[i]].runsAdapter(adapter)) out.push(indices[i]);
  return out;
}

function canLoadAdapter(views: HostView[], indices: i32[]): i32[] {
  const out = new Array<i32>();
  for (let i = 0; i < indices.length; i++) if (views[indices[i]].canLoadAdapter()) out.push(indices[i]);
  return out;
}

function lowLoraCost(views: HostView[], indices: i32[], adapter: string): i32[] {
  const out = new Array<i32>();
  for (let i = 0; i < indices.length; i++) {
    const v = views[indices[i]];
    if (v.runsAdapter(adapter) || v.canLoadAdapter()) out.push(indices[i]);
  }
  return out;
}

function orAll(subset: i32[], all: i32[]): i32[] {
  return subset.length > 0 ? subset : all;
}

function queueThenKv(sig: Signals, indices: i32[]): i32[] {
  return lowestBand(lowestBand(indices, sig.waiting, true), sig.kv, false);
}

function queueLoraKv(views: HostView[], sig: Signals, indices: i32[], adapter: string): i32[] {
  let q = lowestBand(indices, sig.waiting, true);
  if (adapter.length > 0) q = orAll(lowLoraCost(views, q, adapter), q);
  return lowestBand(q, sig.kv, false);
}

export function filterTree(views: HostView[], adapter: string, sheddable: bool, s: MetricsSettings): i32[] {
  const sig = new Signals(views);
  const all = allIndices(views.length);
  if (sheddable) {
    const room = new Array<i32>();
    for (let i = 0; i < all.length; i++) {
      if (sig.waiting[i] <= s.queueThreshold && sig.kv[i] <= s.kvThreshold) room.push(i);
    }
    if (room.length == 0) return room;
    return queueLoraKv(views, sig, room, adapter);
  }
  const lowQueue = new Array<i32>();
  for (let i = 0; i < all.length; i++) if (sig.waiting[i] < s.loraQueueThreshold) lowQueue.push(i);
  if (lowQueue.length == 0) return queueLoraKv(views, sig, all, adapter);
  if (adapter.length == 0) return queueThenKv(sig, lowQueue);
  const affine = runningAdapter(views, lowQueue, adapter);
  if (affine.length > 0) return queueThenKv(sig, affine);
  return queueThenKv(sig, orAll(canLoadAdapter(views, lowQueue), lowQueue));
}
