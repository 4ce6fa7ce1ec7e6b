// Parsing helpers shared by the configuration specs: a configuration that must be accepted (its
// default LbConfig) and one that must be refused (the refusal).
import { parsePluginConfig } from "../config/rules";
import { LbConfig } from "../config/lb_config";

export function accepted(json: string): LbConfig {
  const r = parsePluginConfig(json);
  expect(r.error).toBe("", json);
  return r.config!.defaultConfig!;
}

export function error(json: string): string {
  const r = parsePluginConfig(json);
  expect(r.config).toBeNull(json);
  return r.error;
}
