// Plugin configuration: Higress's ai-load-balancer keys accepted verbatim, _rules_ matching, and
// every bad value refused with a message that names the key.
import { parsePluginConfig, PluginConfig, MatchInput, domainMatches, serviceMatches } from "../config/rules";

function expectContains(actual: string, part: string): void {
  if (!actual.includes(part)) trace(actual);
  expect(actual.includes(part)).toBe(true, "expected '" + actual + "' to contain '" + part + "'");
}

function error(json: string): string {
  const r = parsePluginConfig(json);
  expect(r.config).toBeNull();
  return r.error;
}

const HIGRESS_GLR = `{"lb_policy":"global_least_request","lb_config":{"serviceFQDN":"redis.static","servicePort":6379,"username":"default","password":"123456","timeout":2000,"database":1,"maxRequestCount":20,"cleanInterval":30,"enableDetailLog":true}}`;

describe("Higress configurations", () => {
  it("accepts global_least_request verbatim and derives the Redis cluster name", () => {
    const r = parsePluginConfig(HIGRESS_GLR);
    expect(r.error).toBe("");
    const c = r.config!.defaultConfig!;
    expect(c.policy).toBe("global_least_request");
    expect(c.redis!.cluster).toBe("outbound|6379||redis.static?db=1");
    expect(c.redis!.username).toBe("default");
    expect(c.redis!.password).toBe("123456");
    expect(c.redis!.timeoutMs).toBe(2000);
    expect(c.maxRequestCount).toBe(20);
    expect(c.hostStaleMs).toBe(30 * 60000);
    expect(c.detailLog).toBe(true);
  });

  it("accepts prefix_cache with redisKeyTTL and no database (no ?db suffix)", () => {
    const r = parsePluginConfig(`{"lb_policy":"prefix_cache","lb_config":{"serviceFQDN":"redis.dns","servicePort":"6379","redisKeyTTL":60}}`);
    expect(r.error).toBe("");
    const c = r.config!.defaultConfig!;
    expect(c.redis!.cluster).toBe("outbound|6379||redis.dns");
    expect(c.prefix.keyTtlSeconds).toBe(60);
  });

  it("prefix blocks: per message by default, Higress's user-turn blocks in compat mode", () => {
    const own = parsePluginConfig(`{"lb_policy":"prefix_cache","lb_config":{"serviceFQDN":"r","servicePort":1}}`).config!.defaultConfig!;
    expect(own.prefix.blockBoundary).toBe("message");
    const compat = parsePluginConfig(`{"lb_policy":"prefix_cache","lb_config":{"serviceFQDN":"r","servicePort":1,"compat":true}}`).config!.defaultConfig!;
    expect(compat.prefix.blockBoundary).toBe("user");
    expect(error(`{"lb_policy":"prefix_cache","lb_config":{"serviceFQDN":"r","servicePort":1,"compat":true,"blockBoundary":"message"}}`))
      .toBe("lb_config.blockBoundary must be user when compat is true (Higress closes blocks at user messages only)");
  });

  it("maps the old endpoint_metrics names", () => {
    const a = parsePluginConfig(`{"lb_policy":"least_busy"}`).config!.defaultConfig!;
    const b = parsePluginConfig(`{"lb_policy":"metrics_based","lb_config":{"metric_policy":"least","target_metric":"vllm:num_requests_waiting","rate_limit":0.6}}`).config!.defaultConfig!;
    expect(a.policy).toBe("endpoint_metrics");
    expect(b.policy).toBe("endpoint_metrics");
    expect(b.metrics.metricPolicy).toBe("least");
    expect(b.metrics.targetMetric).toBe("vllm:num_requests_waiting");
    expect(b.metrics.rateLimit).toBe(0.6);
  });

  it("accepts lb_type cluster with cluster_metrics", () => {
    const r = parsePluginConfig(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"mode":"LeastBusy","service_list":["a"]}}`);
    expect(r.error).toBe("");
  });

  it("an empty configuration is valid and selects nothing", () => {
    const r = parsePluginConfig("");
    expect(r.config!.select(new MatchInput("r", "h", "c"))).toBeNull();
  });
});

describe("bad configurations name the key", () => {
  it("not JSON", () => { expectContains(error("{lb_policy:"), "not valid JSON"); });
  it("unknown policy", () => { expectContains(error(`{"lb_policy":"fastest"}`), "lb_policy must be one of"); });
  it("missing Redis service", () => {
    expectContains(error(`{"lb_policy":"global_least_request","lb_config":{"servicePort":6379}}`), "lb_config.serviceFQDN is required");
  });
  it("negative maxRequestCount", () => {
    expect(error(`{"lb_policy":"global_least_request","lb_config":{"serviceFQDN":"r","servicePort":6379,"maxRequestCount":-3}}`))
      .toBe("lb_config.maxRequestCount must be an integer in [0, 1000000000], got -3");
  });
  it("rate_limit out of range", () => {
    expectContains(error(`{"lb_policy":"endpoint_metrics","lb_config":{"rate_limit":1.7}}`), "lb_config.rate_limit must be a number in [0.0, 1.0], got 1.7");
  });
  it("typo in a key", () => {
    expect(error(`{"lb_policy":"global_least_request","lb_config":{"serviceFQDN":"r","servicePort":1,"maxRequestCont":3}}`))
      .toBe("lb_config.maxRequestCont is not a known key");
  });
  it("wrong type in a rule names the rule", () => {
    expect(error(`{"_rules_":[{"_match_route_":["a"],"lb_policy":"header","lb_config":{"header":7}}]}`))
      .toBe("_rules_[0].lb_config.header must be a string, got 7");
  });
  it("a rule without a matcher", () => {
    expectContains(error(`{"_rules_":[{"lb_policy":"header"}]}`), "_rules_[0] needs _match_route_");
  });
  it("lb_config without lb_policy", () => { expectContains(error(`{"lb_config":{}}`), "lb_policy is required"); });
});

function rulesConfig(): PluginConfig {
  const r = parsePluginConfig(`{"lb_policy":"header","lb_config":{"header":"x-top"},"_rules_":[
    {"_match_route_":["route-a"],"lb_policy":"header","lb_config":{"header":"x-a"}},
    {"_match_domain_":["*.example.com"],"lb_policy":"header","lb_config":{"header":"x-b"}},
    {"_match_service_":["vllm.static:8000"],"lb_policy":"header","lb_config":{"header":"x-c"}},
    {"_match_route_":["route-off"]}]}`);
  expect(r.error).toBe("");
  return r.config!;
}

describe("_rules_", () => {

  it("first matching rule wins, else the top level", () => {
    const cfg = rulesConfig();
    expect(cfg.select(new MatchInput("route-a", "x.example.com", "outbound|8000||vllm.static"))!.endpointHeader).toBe("x-a");
    expect(cfg.select(new MatchInput("other", "x.example.com", "outbound|8000||vllm.static"))!.endpointHeader).toBe("x-b");
    expect(cfg.select(new MatchInput("other", "host", "outbound|8000||vllm.static"))!.endpointHeader).toBe("x-c");
    expect(cfg.select(new MatchInput("other", "host", "outbound|9000||vllm.static"))!.endpointHeader).toBe("x-top");
  });

  it("a matching rule without lb_policy disables the plugin for that route", () => {
    const cfg = rulesConfig();
    expect(cfg.select(new MatchInput("route-off", "host", "c"))!.policy).toBe("none");
  });

  it("without a top-level policy an unmatched request selects nothing", () => {
    const only = parsePluginConfig(`{"_rules_":[{"_match_route_":["a"],"lb_policy":"header"}]}`).config!;
    expect(only.select(new MatchInput("b", "h", "c"))).toBeNull();
    expect(only.select(new MatchInput("a", "h", "c"))).not.toBeNull();
  });
});

describe("matchers", () => {
  it("domains: exact, wildcard, port ignored, case-insensitive", () => {
    expect(domainMatches("api.example.com", "API.example.com:8080")).toBe(true);
    expect(domainMatches("*.example.com", "a.b.example.com")).toBe(true);
    expect(domainMatches("*.example.com", "example.com")).toBe(false);
    expect(domainMatches("api.example.com", "api.example.org")).toBe(false);
  });
  it("services: fqdn with or without port", () => {
    expect(serviceMatches("vllm.static", "outbound|8000||vllm.static")).toBe(true);
    expect(serviceMatches("vllm.static:8000", "outbound|8000||vllm.static")).toBe(true);
    expect(serviceMatches("vllm.static:9000", "outbound|8000||vllm.static")).toBe(false);
    expect(serviceMatches("vllm.static", "not-a-cluster")).toBe(false);
  });
});
