// The plugin configuration as Higress delivers it (higress-abi.md, "Plugin configuration"):
//   { ...defaultConfig, "_rules_": [ { "_match_route_": [...], ...config }, ... ] }
// Rules are matched as Higress's SDK matches them (./rule_match.ts); the first matching rule wins;
// otherwise the top-level config applies; with neither the plugin does nothing for that request
// (the route keeps its own load balancing).
import { JsonValue } from "../json/value";
import { parseJson } from "../json/parse";
import { utf8Encode } from "../util/utf8";
import { ConfigErrors, ConfigReader } from "./reader";
import { LbConfig, parseLbConfig, POLICY_NONE } from "./lb_config";
import {
  CATEGORY_HOST, CATEGORY_ROUTE, CATEGORY_ROUTE_AND_SERVICE, CATEGORY_SERVICE, ruleCategory,
  anyDomain, anyEquals, anyPrefixOf, anyService,
} from "./rule_match";

// `_plugin_id_` is added by Higress and removed by its SDK before parsing (wasm-go
// pkg/wrapper/plugin_wrapper.go 584-589 at b573359): never part of the global config.
const TOP_KEYS: string[] = ["lb_type", "lb_policy", "lb_config", "_rules_", "_plugin_id_"];
const MATCH_KEYS: string[] = ["_match_route_", "_match_domain_", "_match_service_", "_match_route_prefix_"];
const RULE_KEYS: string[] = ["lb_type", "lb_policy", "lb_config"].concat(MATCH_KEYS);

export class Rule {
  category: i32 = CATEGORY_ROUTE;
  routes: string[] = [];
  domains: string[] = [];
  services: string[] = [];
  routePrefixes: string[] = [];
  config: LbConfig = new LbConfig();

  /** Higress's GetMatchConfig for one rule (rule_matcher.go 140-174). */
  matches(m: MatchInput): bool {
    if (this.category == CATEGORY_HOST) return anyDomain(this.domains, m.authority);
    if (this.category == CATEGORY_ROUTE) return anyEquals(this.routes, m.route);
    if (this.category == CATEGORY_SERVICE) return anyService(this.services, m.clusterName);
    if (this.category == CATEGORY_ROUTE_AND_SERVICE) return anyEquals(this.routes, m.route) && anyService(this.services, m.clusterName);
    return anyPrefixOf(this.routePrefixes, m.route);
  }
}

/** What a request is matched on: the `route_name` and `cluster_name` properties ("" when absent)
 *  and the `:authority` header, as Envoy gives them. */
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

  /** Rules in configuration order, first match wins; else the top-level config (or none). */
  select(m: MatchInput): LbConfig | null {
    for (let i = 0; i < this.rules.length; i++) {
      if (this.rules[i].matches(m)) return this.rules[i].config;
    }
    return this.defaultConfig;
  }
}

/** Warnings a warning line names at most (a configuration of many rules must not make one huge line). */
const SHOWN_WARNINGS = 10;

export class ParsedConfig {
  /** Accepted keys that do nothing here (Higress-only keys, ignored matchers). */
  warnings: string[] = [];
  constructor(public config: PluginConfig | null, public error: string) {}

  /** The one line to log for the warnings ("" without any): the first ten, then how many more. */
  warningLine(): string {
    const n = this.warnings.length;
    if (n == 0) return "";
    const shown = n <= SHOWN_WARNINGS ? this.warnings : this.warnings.slice(0, SHOWN_WARNINGS);
    return "configuration accepted with warnings: " + shown.join("; ") + (n > SHOWN_WARNINGS ? "; and " + (n - SHOWN_WARNINGS).toString() + " more" : "");
  }
}

export function parsePluginConfig(text: string): ParsedConfig {
  return parsePluginConfigBytes(utf8Encode(text));
}

/** Only JSON whitespace (or nothing): an empty configuration. */
function isBlank(src: Uint8Array): bool {
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c != 0x20 && c != 0x0A && c != 0x0D && c != 0x09) return false;
  }
  return true;
}

/** The configuration as Envoy delivers it (proxy_get_buffer_bytes, PluginConfiguration): bytes,
 *  read by the JSON parser directly, so an invalid UTF-8 sequence inside a string becomes U+FFFD
 *  in that string and never takes a quote or bracket after it (the SDK's String.UTF8.decode
 *  swallowed the byte after a lone lead byte, a closing quote included). */
export function parsePluginConfigBytes(src: Uint8Array): ParsedConfig {
  const errors = new ConfigErrors();
  if (isBlank(src)) return new ParsedConfig(new PluginConfig(), "");
  const parsed = parseJson(src);
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
    // Higress reads `_rules_` with gjson Array(): a single object is a one-rule list.
    if (rulesValue.isArray()) parseRules(rulesValue.arr(), cfg, errors);
    else if (rulesValue.isObject()) parseRules([rulesValue], cfg, errors);
    else errors.add("_rules_ must be a list of rules");
  }
  if (!errors.ok) return new ParsedConfig(null, errors.first());
  const ok = new ParsedConfig(cfg, "");
  ok.warnings = errors.warnings;
  return ok;
}

function parseRules(items: JsonValue[], cfg: PluginConfig, errors: ConfigErrors): void {
  for (let i = 0; i < items.length; i++) {
    const path = "_rules_[" + i.toString() + "]";
    const item = items[i];
    if (!item.isObject()) { errors.add(path + " must be an object"); continue; }
    const r = new ConfigReader(item, path, errors);
    r.rejectUnknown(RULE_KEYS);
    const rule = new Rule();
    // rule_matcher.go 307-362: routes, services and prefixes drop "" entries, domains keep them.
    rule.routes = r.matchList("_match_route_", true);
    rule.domains = r.matchList("_match_domain_", false);
    rule.services = r.matchList("_match_service_", true);
    rule.routePrefixes = r.matchList("_match_route_prefix_", true);
    const hasRoute = rule.routes.length > 0;
    const hasDomain = rule.domains.length > 0;
    const hasService = rule.services.length > 0;
    if (!hasRoute && !hasDomain && !hasService && rule.routePrefixes.length == 0) {
      errors.add(path + " must have a non-empty _match_route_, _match_domain_, _match_service_ or _match_route_prefix_, got none");
    }
    rule.category = ruleCategory(hasRoute, hasDomain, hasService);
    warnIgnoredMatchers(rule, r);
    // Each rule stands alone (no inheritance from the top level), as in Higress. A rule with only
    // matchers turns the plugin off for its traffic; lb_config without lb_policy is a mistake.
    if (!r.has("lb_policy") && r.has("lb_config")) errors.add(r.key("lb_policy") + " is required when lb_config is given");
    rule.config = parseLbConfig(item, path, errors);
    cfg.rules.push(rule);
  }
}

/** Matchers the SDK ignores because of the rule's category are accepted with a warning. */
function warnIgnoredMatchers(rule: Rule, r: ConfigReader): void {
  const c = rule.category;
  const ignored = new Array<string>();
  if (c == CATEGORY_ROUTE || c == CATEGORY_ROUTE_AND_SERVICE) {
    if (rule.domains.length > 0) ignored.push("_match_domain_");
    if (rule.routePrefixes.length > 0) ignored.push("_match_route_prefix_");
  } else if (c == CATEGORY_HOST) {
    if (rule.services.length > 0) ignored.push("_match_service_");
    if (rule.routePrefixes.length > 0) ignored.push("_match_route_prefix_");
  } else if (c == CATEGORY_SERVICE && rule.routePrefixes.length > 0) {
    ignored.push("_match_route_prefix_");
  }
  for (let i = 0; i < ignored.length; i++) {
    r.errors.warn(r.key(ignored[i]) + " is ignored: this rule matches by " + categoryName(c) + " (Higress's matcher uses one category per rule)");
  }
}

function categoryName(c: i32): string {
  if (c == CATEGORY_ROUTE) return "_match_route_";
  if (c == CATEGORY_ROUTE_AND_SERVICE) return "_match_route_ and _match_service_";
  if (c == CATEGORY_HOST) return "_match_domain_";
  if (c == CATEGORY_SERVICE) return "_match_service_";
  return "_match_route_prefix_";
}
