// Which LoRA adapter a request asks for: its `model` when that names an adapter, i.e. the name is
// in some candidate's running or waiting adapter list, or in lb_config.loraAdapters (adapters
// no server has loaded yet). Otherwise "" (a base-model request: LoRA steps are skipped).
// Failure behaviour: no body / no model -> "".
import { LbRequest } from "../../services/request/request";
import { HostView } from "../../services/metrics_view/host_view";

export function adapterNamed(model: string, views: HostView[], configured: string[]): string {
  if (model.length == 0) return "";
  if (configured.includes(model)) return model;
  for (let i = 0; i < views.length; i++) {
    const m = views[i].metrics;
    if (m === null) continue;
    if (m.runningLora.includes(model) || m.waitingLora.includes(model)) return model;
  }
  return "";
}

export function adapterOf(s: LbRequest, views: HostView[], configured: string[]): string {
  const body = s.body;
  if (body === null) return "";
  return adapterNamed(body.stringField("model"), views, configured);
}
