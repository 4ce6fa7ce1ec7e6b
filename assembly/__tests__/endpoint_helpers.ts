// Builders for the endpoint_metrics specs: a HostView with hand-set engine metrics.
import { EngineMetrics } from "../metrics/engine_metrics";
import { HostView } from "../services/metrics_view/host_view";

export function view(address: string, waiting: f64, kv: f64, running: f64 = 0, lora: string[] = [], maxLora: i32 = 0): HostView {
  const m = new EngineMetrics();
  m.waiting = waiting;
  m.running = running;
  m.kvUsage = kv;
  m.hasKv = true;
  m.valid = true;
  m.engine = "vllm";
  m.runningLora = lora;
  m.maxLora = maxLora;
  m.loraSeen = maxLora > 0;
  const v = new HostView(address);
  v.metrics = m;
  v.fresh = true;
  return v;
}

/** A host whose metrics are missing or stale: only its in-flight count is known. */
export function staleView(address: string, inflight: f64): HostView {
  const v = new HostView(address);
  v.inflight = inflight;
  return v;
}
