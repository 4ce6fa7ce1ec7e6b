// The plugin configuration as Higress delivers it (higress-abi.md, "Plugin configuration"):
//   { ...defaultConfig, "_rules_": [ { "_match_route_": [...], ...config }, ... ] }
// First matching rule wins; otherwise the top-level config applies; with neither the plugin does
// nothing for that request (the route keeps its own load balancing).
import { JsonValue } from "../json/value";
import { parseJsonString } from "../json/parse";
import { ConfigErrors, ConfigReader } from "./reader";
import { LbConfig, parseLbConfig, POLICY_NONE } from "./lb_config";

const TOP_KEYS: string[] = ["lb_type", "lb_policy", "lb_config", "_rules_"];
const RULE_KEYS: string[] = ["lb_type", "lb_policy", "lb_config", "_match_route_", "_match_domain_", "_match_service_"];

export class Rule {
  routes: string[] = [];
  domains: string[] = [];
  services: string[] = [];
  config: LbConfig = new LbConfig();
}

/** What a request is matched on. */
export class MatchInput {
  constructor(public route: string, public authority: string, public clusterName: string) {}
}

export class PluginConfig {
  defaultConfig: LbConfig | null = null;
  rules: Rule[] = [];
  /** Every distinct config, for per-config setup (Redis init, timers). */
  all(): LbConfig[] {
    const out = new Array<LbConfig>();
    const d = this.defaultConfig;
    if (d !== null) out.push(d);
    for (let i = 0; i < this.rules.length; i++) out.push(this.rules[i].config);
    return out;
  }

  select(m: MatchInput): LbConfig | null {
    for (let i = 0; i < this.rules.length; i++) {
      if (ruleMatches(this.rules[i], m)) return this.rules[i].config;
    }
    return this.defaultConfig;
  }
}

export class ParsedConfig {
  constructor(public config: PluginConfig | null, public error: string) {}
}

/** `*.example.com` matches any subdomain; otherwise exact, case-insensitive; the port is ignored. */
export function domainMatches(pattern: string, authority: string): bool {
  let host = authority.toLowerCase();
  const colon = host.lastIndexOf(":");
  if (colon > 0 && host.indexOf("]") < colon) host = host.substring(0, colon);
  const p = pattern.toLowerCase();
  if (p.startsWith("*.")) return host.endsWith(p.substring(1)) && host.length > p.length - 1;
  if (p == "*") return true;
  return host == p;
}

/** `outbound|8000||vllm.static` -> fqdn `vllm.static`, port `8000`; a pattern may omit `:port`. */
export function serviceMatches(pattern: string, clusterName: string): bool {
  const parts = clusterName.split("|");
  if (parts.length < 4) return false;
  const port = parts[1];
  const fqdn = parts[3];
  const colon = pattern.lastIndexOf(":");
  if (colon < 0) return pattern == fqdn;
  return pattern.substring(0, colon) == fqdn && pattern.substring(colon + 1) == port;
}

function ruleMatches(rule: Rule, m: MatchInput): bool {
  for (let i = 0; i < rule.routes.length; i++) if (rule.routes[i] == m.route) return true;
  for (let i = 0; i < rule.domains.length; i++) if (domainMatches(rule.domains[i], m.authority)) return true;
  for (let i = 0; i < rule.services.length; i++) if (serviceMatches(rule.services[i], m.clusterName)) return true;
  return false;
}

export function parsePluginConfig(text: string): ParsedConfig {
  const errors = new ConfigErrors();
  if (text.trim().length == 0) return new ParsedConfig(new PluginConfig(), "");
  const parsed = parseJsonString(text);
  const root = parsed.value;
  if (!parsed.ok || root === null) return new ParsedConfig(null, "configuration is not valid JSON: " + parsed.error);
  if (!root.isObject()) return new ParsedConfig(null, "configuration must be a JSON object");
  const cfg = new PluginConfig();
  const top = new ConfigReader(root, "", errors);
  top.rejectUnknown(TOP_KEYS);
  if (top.has("lb_policy")) {
    const d = parseLbConfig(root, "", errors);
    if (d.policy != POLICY_NONE) cfg.defaultConfig = d;
  } else if (top.has("lb_config")) {
    errors.add("lb_policy is required when lb_config is given");
  }
  const rulesValue = root.get("_rules_");
  if (rulesValue !== null && !rulesValue.isNull()) {
    if (!rulesValue.isArray()) errors.add("_rules_ must be a list");
    else parseRules(rulesValue.arr(), cfg, errors);
  }
  if (!errors.ok) return new ParsedConfig(null, errors.first());
  return new ParsedConfig(cfg, "");
}

function parseRules(items: JsonValue[], cfg: PluginConfig, errors: ConfigErrors): void {
  for (let i = 0; i < items.length; i++) {
    const path = "_rules_[" + i.toString() + "]";
    const item = items[i];
    if (!item.isObject()) { errors.add(path + " must be an object"); continue; }
    const r = new ConfigReader(item, path, errors);
    r.rejectUnknown(RULE_KEYS);
    const rule = new Rule();
    rule.routes = r.strList("_match_route_");
    rule.domains = r.strList("_match_domain_");
    rule.services = r.strList("_match_service_");
    if (rule.routes.length + rule.domains.length + rule.services.length == 0) {
      errors.add(path + " needs _match_route_, _match_domain_ or _match_service_");
    }
    rule.config = parseLbConfig(item, path, errors);
    cfg.rules.push(rule);
  }
}
