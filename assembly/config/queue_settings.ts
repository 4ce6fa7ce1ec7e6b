// Gateway-side queueing settings (lb_config keys, any Redis-backed policy). Defaults are documented
// in README ("Gateway-side queueing").
import { ConfigReader } from "./reader";

export const QUEUE_KEYS: string[] = ["queueCapacity", "queueMaxWaitMs", "queueTenantHeader", "queuePollMs", "queueEntryTtlMs"];

export class QueueSettings {
  /** Requests of a pool admitted at once across every gateway (0: no queue). */
  capacity: i64 = 0;
  maxWaitMs: i64 = 10000;
  tenantHeader: string = "x-gateway-inference-fairness-id";
  pollMs: i64 = 100;
  /** A waiting entry not polled for this long (its gateway crashed) is dropped. */
  entryTtlMs: i64 = 3000;
}

export function parseQueueSettings(r: ConfigReader): QueueSettings {
  const s = new QueueSettings();
  s.capacity = r.int("queueCapacity", 0, 0, 1000000);
  s.maxWaitMs = r.int("queueMaxWaitMs", 10000, 1, 3600000, "milliseconds");
  s.tenantHeader = r.headerName("queueTenantHeader", s.tenantHeader, true); // "": one shared tenant
  s.pollMs = r.int("queuePollMs", 100, 10, 10000, "milliseconds");
  s.entryTtlMs = r.int("queueEntryTtlMs", 3000, 100, 3600000, "milliseconds");
  if (s.capacity > 0 && s.entryTtlMs < 2 * s.pollMs) r.errors.add(r.key("queueEntryTtlMs") + " must be at least twice queuePollMs, got " + s.entryTtlMs.toString());
  return s;
}
