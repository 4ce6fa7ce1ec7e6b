// endpoint_hash settings (Higress PR #3967, higress-parity.md section 7): `hash_header` (default
// x-mse-consumer; an empty string means the default), `stickyTimeout` in minutes (0 or missing ->
// 60, as Higress), plus ours: `compat` (Higress's key layout, shared with gateways still on
// Higress's plugin) and the load gate of prefix_cache (`loadGateAbs`, `loadGateRel`,
// `loadGateCap`, read by prefix_settings.ts), which decides when a session leaves a busy pod.
import { ConfigReader } from "./reader";

export const ENDPOINT_HASH_KEYS: string[] = ["hash_header", "stickyTimeout", "compat", "loadGateAbs", "loadGateRel", "loadGateCap"];

export class EndpointHashSettings {
  hashHeader: string = "x-mse-consumer";
  stickyTtlSeconds: i64 = 3600;
  compat: bool = false;
}

export function parseEndpointHashSettings(r: ConfigReader): EndpointHashSettings {
  const s = new EndpointHashSettings();
  s.hashHeader = r.headerNameOrDefault("hash_header", s.hashHeader);
  const minutes = r.int("stickyTimeout", 60, 0, 525600, "minutes");
  s.stickyTtlSeconds = (minutes == 0 ? 60 : minutes) * 60;
  s.compat = r.bool("compat", false);
  return s;
}
