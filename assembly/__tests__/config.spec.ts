// Plugin configuration: Higress's ai-load-balancer keys accepted verbatim, _rules_ matching, and
// every bad value refused with a message that names the key.
import { parsePluginConfig, PluginConfig, MatchInput } from "../config/rules";
import { domainMatches, serviceMatches, stripPort } from "../config/rule_match";

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
      .toBe("lb_config.blockBoundary must be user when compat is true (Higress closes blocks at user messages only), got 'message'");
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
    expectContains(error(`{"_rules_":[{"lb_policy":"header"}]}`), "_rules_[0] must have a non-empty _match_route_");
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

// One row per point of higress-parity.md section 2 (Higress's SDK matcher): the rule's match keys,
// the request (route_name, :authority, cluster_name), and whether the rule applies.
class Case {
  constructor(public what: string, public matchers: string, public route: string, public authority: string,
    public cluster: string, public applies: bool) {}
}
const VLLM = "outbound|8000||vllm.static";
const CASES: Case[] = [
  new Case("route: exact name", `"_match_route_":["r1"]`, "r1", "h", VLLM, true),
  new Case("route: another name", `"_match_route_":["r1"]`, "r2", "h", VLLM, false),
  new Case("route: case-sensitive", `"_match_route_":["R1"]`, "r1", "h", VLLM, false),
  new Case("route: not a prefix match", `"_match_route_":["r"]`, "r1", "h", VLLM, false),
  new Case("route: OR within the list", `"_match_route_":["a","r1"]`, "r1", "h", VLLM, true),
  new Case("route: a scalar is a one-element list", `"_match_route_":"r1"`, "r1", "h", VLLM, true),
  new Case("route: empty entries dropped, so a missing route_name never matches", `"_match_route_":["","r1"]`, "", "h", VLLM, false),
  new Case("route wins over domain: the domain is ignored", `"_match_route_":["r1"],"_match_domain_":["other.com"]`, "r1", "h", VLLM, true),
  new Case("route wins over domain: a domain match alone is not enough", `"_match_route_":["r1"],"_match_domain_":["h"]`, "r2", "h", VLLM, false),
  new Case("route AND service: both", `"_match_route_":["r1"],"_match_service_":["vllm.static"]`, "r1", "h", VLLM, true),
  new Case("route AND service: route only", `"_match_route_":["r1"],"_match_service_":["other.static"]`, "r1", "h", VLLM, false),
  new Case("route AND service: service only", `"_match_route_":["r1"],"_match_service_":["vllm.static"]`, "r2", "h", VLLM, false),
  new Case("route wins over prefix: the prefix is ignored", `"_match_route_":["r1"],"_match_route_prefix_":["r"]`, "r2", "h", VLLM, false),
  new Case("domain: exact", `"_match_domain_":["api.example.com"]`, "r", "api.example.com", VLLM, true),
  new Case("domain: port stripped from the request", `"_match_domain_":["api.example.com"]`, "r", "api.example.com:8080", VLLM, true),
  new Case("domain: case-sensitive", `"_match_domain_":["api.example.com"]`, "r", "API.example.com", VLLM, false),
  new Case("domain: the pattern keeps its port", `"_match_domain_":["api.example.com:8080"]`, "r", "api.example.com:8080", VLLM, false),
  new Case("domain: *x is a suffix match", `"_match_domain_":["*.example.com"]`, "r", "a.b.example.com", VLLM, true),
  new Case("domain: *.x does not match x itself", `"_match_domain_":["*.example.com"]`, "r", "example.com", VLLM, false),
  new Case("domain: *x needs no dot", `"_match_domain_":["*example.com"]`, "r", "myexample.com", VLLM, true),
  new Case("domain: x* is a prefix match", `"_match_domain_":["api.*"]`, "r", "api.example.org:80", VLLM, true),
  new Case("domain: x* prefix mismatch", `"_match_domain_":["api.*"]`, "r", "www.example.org", VLLM, false),
  new Case("domain: * matches any host", `"_match_domain_":["*"]`, "r", "anything", VLLM, true),
  new Case("domain: IPv6 literal without port", `"_match_domain_":["[::1]"]`, "r", "[::1]", VLLM, true),
  new Case("domain: IPv6 literal with port", `"_match_domain_":["[::1]"]`, "r", "[::1]:80", VLLM, true),
  new Case("domain: OR within the list", `"_match_domain_":["a.com","b.com"]`, "r", "b.com", VLLM, true),
  new Case("domain: an empty entry is kept and matches an empty host", `"_match_domain_":[""]`, "r", ":80", VLLM, true),
  new Case("domain wins over service: the service is ignored", `"_match_domain_":["h"],"_match_service_":["other.static"]`, "r", "h", VLLM, true),
  new Case("domain wins over service: a service match alone is not enough", `"_match_domain_":["x"],"_match_service_":["vllm.static"]`, "r", "h", VLLM, false),
  new Case("service: fqdn", `"_match_service_":["vllm.static"]`, "r", "h", VLLM, true),
  new Case("service: fqdn:port", `"_match_service_":["vllm.static:8000"]`, "r", "h", VLLM, true),
  new Case("service: wrong port", `"_match_service_":["vllm.static:9000"]`, "r", "h", VLLM, false),
  new Case("service: case-sensitive", `"_match_service_":["VLLM.static"]`, "r", "h", VLLM, false),
  new Case("service: cluster name without four fields", `"_match_service_":["vllm.static"]`, "r", "h", "vllm.static", false),
  new Case("service: five fields", `"_match_service_":["vllm.static"]`, "r", "h", "outbound|8000||vllm.static|x", false),
  new Case("service: Istio subset field", `"_match_service_":["vllm.static:8000"]`, "r", "h", "outbound|8000|v1|vllm.static", true),
  new Case("service wins over prefix: the prefix is ignored", `"_match_service_":["other"],"_match_route_prefix_":["r"]`, "r1", "h", VLLM, false),
  new Case("route prefix: starts with", `"_match_route_prefix_":["ai-"]`, "ai-route-1", "h", VLLM, true),
  new Case("route prefix: not a suffix", `"_match_route_prefix_":["route"]`, "ai-route", "h", VLLM, false),
  new Case("route prefix: OR within the list", `"_match_route_prefix_":["x-","ai-"]`, "ai-1", "h", VLLM, true),
  new Case("route prefix: case-sensitive", `"_match_route_prefix_":["AI-"]`, "ai-1", "h", VLLM, false),
];

describe("_rules_ match as Higress's SDK matcher (table)", () => {
  it("each case", () => {
    for (let i = 0; i < CASES.length; i++) {
      const c = CASES[i];
      const r = parsePluginConfig(`{"lb_policy":"header","lb_config":{"header":"x-top"},"_rules_":[{` + c.matchers +
        `,"lb_policy":"header","lb_config":{"header":"x-rule"}}]}`);
      expect(r.error).toBe("", c.what);
      const got = r.config!.select(new MatchInput(c.route, c.authority, c.cluster))!.endpointHeader;
      expect(got).toBe(c.applies ? "x-rule" : "x-top", c.what);
    }
  });

  it("the pure matchers agree with the table's edge cases", () => {
    expect(stripPort("a.com:80")).toBe("a.com");
    expect(stripPort("[::1]")).toBe("[::1]");
    expect(stripPort("[::1]:443")).toBe("[::1]");
    expect(stripPort("a.com:")).toBe("a.com");
    expect(domainMatches("*", "")).toBe(true);
    expect(serviceMatches("vllm.static", "outbound|8000||vllm.static")).toBe(true);
  });

  it("first matching rule wins, in configuration order", () => {
    const cfg = parsePluginConfig(`{"_rules_":[
      {"_match_domain_":["*"],"lb_policy":"header","lb_config":{"header":"x-1"}},
      {"_match_route_":["r1"],"lb_policy":"header","lb_config":{"header":"x-2"}}]}`).config!;
    expect(cfg.select(new MatchInput("r1", "h", VLLM))!.endpointHeader).toBe("x-1");
  });

  it("each rule is parsed on its own: nothing is inherited from the top level", () => {
    const cfg = parsePluginConfig(`{"lb_policy":"header","lb_config":{"header":"x-top","debugHeader":"x-dbg"},
      "_rules_":[{"_match_route_":["r1"],"lb_policy":"header"}]}`).config!;
    const rule = cfg.select(new MatchInput("r1", "h", VLLM))!;
    expect(rule.endpointHeader).toBe("x-llmlb-endpoint");
    expect(rule.debugHeader).toBe("");
  });

  it("a rule whose match lists are all empty is refused", () => {
    expectContains(error(`{"_rules_":[{"_match_route_":[""],"_match_service_":[],"lb_policy":"header"}]}`), "_rules_[0] must have a non-empty");
  });

  it("a rule with lb_config but no lb_policy is refused (Higress refuses any rule without lb_policy)", () => {
    expect(error(`{"_rules_":[{"_match_route_":["a"],"lb_config":{"header":"x"}}]}`))
      .toBe("_rules_[0].lb_policy is required when lb_config is given");
  });

  it("a single rule object instead of a list is one rule (gjson Array)", () => {
    const cfg = parsePluginConfig(`{"_rules_":{"_match_route_":["a"],"lb_policy":"header"}}`).config!;
    expect(cfg.rules.length).toBe(1);
  });

  it("ignored matchers are accepted with a warning naming them", () => {
    const r = parsePluginConfig(`{"_rules_":[{"_match_route_":["a"],"_match_domain_":["h"],"_match_route_prefix_":["p"],"lb_policy":"header"}]}`);
    expect(r.error).toBe("");
    expect(r.warnings.length).toBe(2);
    expectContains(r.warnings[0], "_rules_[0]._match_domain_ is ignored");
    expectContains(r.warnings[1], "_rules_[0]._match_route_prefix_ is ignored");
  });

  it("_plugin_id_ (added by Higress) is not a global config", () => {
    const cfg = parsePluginConfig(`{"_plugin_id_":"p1","_rules_":[{"_match_route_":["a"],"lb_policy":"header"}]}`).config!;
    expect(cfg.defaultConfig).toBeNull();
  });

  it("a non-string match entry names the key", () => {
    expect(error(`{"_rules_":[{"_match_domain_":[7],"lb_policy":"header"}]}`)).toBe("_rules_[0]._match_domain_[0] must be a string, got 7");
  });
});

describe("keys Higress reads", () => {
  it("cluster_metrics with every Higress key is accepted, without warnings, and read", () => {
    const r = parsePluginConfig(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"mode":"AdaptiveScore",
      "service_list":["outbound|80||a.dns","outbound|80||b.dns"],"cluster_header":"x-c","rate_limit":0.9,"queue_size":50,
      "ewma_beta":0.4,"p2c_choices":2,"ttft_weight":0.5,"total_latency_weight":0.5,"error_penalty":2,"failure_cooldown_ms":1000,
      "metrics_missing_policy":"least_busy","global_inflight_enabled":true,"global_inflight_key_prefix":"p",
      "global_inflight_timeout":500,"global_inflight_key_ttl":60,"serviceFQDN":"redis.static","servicePort":6379,
      "username":"u","password":"p","database":1}}`);
    expect(r.error).toBe("");
    expect(r.warnings.length).toBe(0);
    const c = r.config!.defaultConfig!;
    expect(c.clusterMetrics.queueSize).toBe(50);
    expect(c.keyPrefix).toBe("p");
    expect(c.poolCluster).toBe("AdaptiveScore");
    expect(c.redis!.cluster).toBe("outbound|6379||redis.static?db=1");
    expect(c.redis!.timeoutMs).toBe(500);
  });

  it("cluster_hash is accepted; its weights must sum to 100 as in Higress", () => {
    const ok = parsePluginConfig(`{"lb_type":"cluster","lb_policy":"cluster_hash","lb_config":{"hash_header":"x-user",
      "clusters":[{"cluster":"outbound|80||a.dns","weight":60},{"cluster":"outbound|80||b.dns","weight":40}]}}`);
    expect(ok.error).toBe("");
    expect(error(`{"lb_type":"cluster","lb_policy":"cluster_hash","lb_config":{"clusters":[{"cluster":"a","weight":60}]}}`))
      .toBe("lb_config.clusters weights must sum to 100, got 60");
    expect(error(`{"lb_type":"cluster","lb_policy":"cluster_hash","lb_config":{}}`))
      .toBe("lb_config.clusters must be a non-empty list of {cluster, weight}");
  });

  it("what Higress refuses in cluster_metrics is refused", () => {
    expect(error(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"mode":"LeastBusy"}}`))
      .toBe("lb_config.service_list must be a non-empty list of cluster names");
    expectContains(error(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],"ewma_beta":1.5}}`),
      "lb_config.ewma_beta must be a number in [0.0, 1.0], got 1.5");
    expect(error(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],"global_inflight_enabled":true}}`))
      .toBe("lb_config.serviceFQDN and servicePort are required when global_inflight_enabled is true");
  });

  it("lb_type and policy families must agree, as in Higress", () => {
    expect(error(`{"lb_policy":"cluster_metrics","lb_config":{"service_list":["a"]}}`))
      .toBe("lb_policy must be an endpoint policy when lb_type is endpoint (cluster_metrics and cluster_hash need lb_type: cluster), got 'cluster_metrics'");
    expect(error(`{"lb_type":"cluster","lb_policy":"prefix_cache"}`)).toBe("lb_policy must be cluster_metrics or cluster_hash when lb_type is cluster, got 'prefix_cache'");
  });

  it("keys of other Higress policies inside an endpoint policy are accepted and named in one warning", () => {
    const r = parsePluginConfig(`{"lb_policy":"global_least_request","lb_config":{"serviceFQDN":"r","servicePort":1,"hash_header":"x","stickyTimeout":5}}`);
    expect(r.error).toBe("");
    expect(r.warnings.length).toBe(1);
    expect(r.warnings[0]).toBe("lb_config.hash_header, lb_config.stickyTimeout: read by Higress, ignored here (not used by lb_policy global_least_request)");
  });

  it("keys of other Higress policies inside a cluster policy are accepted and named in one warning", () => {
    const m = parsePluginConfig(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],"maxRequestCount":3,"hash_header":"x","clusters":[]}}`);
    expect(m.error).toBe("");
    expect(m.warnings.length).toBe(1);
    expect(m.warnings[0]).toBe("lb_config.maxRequestCount, lb_config.hash_header, lb_config.clusters: read by Higress, ignored here (not used by lb_policy cluster_metrics)");
    const h = parsePluginConfig(`{"lb_type":"cluster","lb_policy":"cluster_hash","lb_config":{"clusters":[{"cluster":"a","weight":100}],"redisKeyTTL":5,"mode":"x","password":12345}}`);
    expect(h.error).toBe("");
    expect(h.warnings.length).toBe(1);
    expect(h.warnings[0]).toBe("lb_config.redisKeyTTL, lb_config.mode, lb_config.password: read by Higress, ignored here (not used by lb_policy cluster_hash)");
    // Our own endpoint keys are no Higress keys: refused there.
    expect(error(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],"leaseTTL":30}}`))
      .toBe("lb_config.leaseTTL is not a known key");
  });

  it("serviceHost and logLevel are no Higress keys: refused as unknown", () => {
    expect(error(`{"lb_policy":"global_least_request","lb_config":{"serviceFQDN":"r","servicePort":1,"serviceHost":"redis.static"}}`))
      .toBe("lb_config.serviceHost is not a known key");
    expect(error(`{"lb_policy":"endpoint_metrics","lb_config":{"logLevel":"debug"}}`)).toBe("lb_config.logLevel is not a known key");
  });

  it("a true unknown key is still refused, named", () => {
    expect(error(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],"ewma_alpha":0.5}}`))
      .toBe("lb_config.ewma_alpha is not a known key");
  });
});

const GLR = `"lb_policy":"global_least_request","lb_config":{"serviceFQDN":"r","servicePort":6379`;
function glr(extra: string): string { return "{" + GLR + "," + extra + "}}"; }

describe("validation refuses what the plugin cannot use", () => {
  it("numbers: numeric strings are numbers, a number followed by junk is not", () => {
    expect(parsePluginConfig(glr(`"timeout":"2500"`)).config!.defaultConfig!.redis!.timeoutMs).toBe(2500);
    expect(error(glr(`"timeout":"3s"`))).toBe("lb_config.timeout must be an integer in [0, 60000] (milliseconds), got '3s'");
    expect(error(glr(`"maxRequestCount":"10abc"`))).toBe("lb_config.maxRequestCount must be an integer in [0, 1000000000], got '10abc'");
    expect(error(`{"lb_policy":"global_least_request","lb_config":{"serviceFQDN":"r","servicePort":"6379; FLUSHALL"}}`))
      .toBe("lb_config.servicePort must be an integer in [0, 65535], got '6379; FLUSHALL'");
    expectContains(error(glr(`"timeout":" 100"`)), "lb_config.timeout must be an integer");
    expectContains(error(glr(`"timeout":"0x10"`)), "lb_config.timeout must be an integer");
    expect(parsePluginConfig(`{"lb_policy":"endpoint_metrics","lb_config":{"rate_limit":"0.6"}}`).config!.defaultConfig!.metrics.rateLimit).toBe(0.6);
    expectContains(error(`{"lb_policy":"endpoint_metrics","lb_config":{"rate_limit":"0.6x"}}`), "lb_config.rate_limit must be a number");
  });

  it("pickDeadlineMs: 50 by default, an integer in [1, 60000], refused by name otherwise", () => {
    expect(parsePluginConfig(glr(`"timeout":2000`)).config!.defaultConfig!.pickDeadlineMs).toBe(50);
    expect(parsePluginConfig(glr(`"pickDeadlineMs":"5"`)).config!.defaultConfig!.pickDeadlineMs).toBe(5);
    expectContains(error(glr(`"pickDeadlineMs":0`)), "lb_config.pickDeadlineMs must be an integer in [1, 60000] (milliseconds), got 0");
    expectContains(error(glr(`"pickDeadlineMs":"5ms"`)), "lb_config.pickDeadlineMs must be an integer");
    expectContains(error(glr(`"pickDeadlineMs":60001`)), "lb_config.pickDeadlineMs must be an integer");
  });

  it("Higress's zero-means-default durations", () => {
    const c = parsePluginConfig(glr(`"timeout":0,"cleanInterval":0`)).config!.defaultConfig!;
    expect(c.redis!.timeoutMs).toBe(3000);
    expect(c.hostStaleMs).toBe(60 * 60000);
    const p = parsePluginConfig(`{"lb_policy":"prefix_cache","lb_config":{"serviceFQDN":"r","servicePort":1,"redisKeyTTL":0}}`).config!.defaultConfig!;
    expect(p.prefix.keyTtlSeconds).toBe(1800);
  });

  it("every duration's message names its unit", () => {
    expect(error(`{"lb_policy":"endpoint_hash","lb_config":{"serviceFQDN":"r","servicePort":1,"stickyTimeout":-1}}`))
      .toBe("lb_config.stickyTimeout must be an integer in [0, 525600] (minutes), got -1");
    expect(error(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],"global_inflight_timeout":-1}}`))
      .toBe("lb_config.global_inflight_timeout must be an integer in [0, 60000] (milliseconds), got -1");
    expect(error(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],"global_inflight_key_ttl":-1}}`))
      .toBe("lb_config.global_inflight_key_ttl must be an integer in [0, 31536000] (seconds), got -1");
    expect(error(`{"lb_policy":"predicted_latency","lb_config":{"sloTtftMs":-1}}`))
      .toBe("lb_config.sloTtftMs must be a number in [0.0, 3600000.0] (milliseconds), got -1");
    expectContains(error(glr(`"queueMaxWaitMs":0`)), "lb_config.queueMaxWaitMs must be an integer in [1, 3600000] (milliseconds)");
  });

  it("a polled report may not go stale before the next scrape answers (staleAfterMs > scrapeIntervalMs + scrapeTimeoutMs)", () => {
    const poll = (extra: string): string => `{"lb_policy":"endpoint_metrics","lb_config":{"metricsSource":"poll","metricsCluster":"dst",` + extra + "}}";
    expect(error(poll(`"scrapeIntervalMs":10000`)))
      .toBe("lb_config.staleAfterMs must be more than scrapeIntervalMs + scrapeTimeoutMs (10500 ms) when metricsSource is poll, got 5000");
    expect(error(poll(`"staleAfterMs":1500`))).toBe("lb_config.staleAfterMs must be more than scrapeIntervalMs + scrapeTimeoutMs (1500 ms) when metricsSource is poll, got 1500");
    expect(parsePluginConfig(poll(`"staleAfterMs":1501`)).error).toBe("");
    // Health checks: Envoy's interval is not the plugin's to know.
    expect(parsePluginConfig(`{"lb_policy":"endpoint_metrics","lb_config":{"scrapeIntervalMs":10000}}`).error).toBe("");
  });

  it("header names must be HTTP tokens", () => {
    expect(error(glr(`"debugHeader":"x bad header"`)))
      .toBe("lb_config.debugHeader must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~), got 'x' followed by ' ' (the rest not shown)");
    expect(error(glr(`"destinationHeader":"x-dest\\r\\nx-injected: 1"`)))
      .toBe("lb_config.destinationHeader must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~), got 'x-dest' followed by '\\r' (the rest not shown)");
    expectContains(error(glr(`"priorityHeader":""`)), "lb_config.priorityHeader must be an HTTP header name");
    expectContains(error(`{"lb_policy":"header","lb_config":{"header":":authority"}}`), "lb_config.header must be an HTTP header name");
    expect(parsePluginConfig(glr(`"debugHeader":"X-LLMLB-Debug","destinationHeader":""`)).config!.defaultConfig!.debugHeader).toBe("x-llmlb-debug");
    // Request headers the plugin reads: a name no request can carry would turn the feature off unseen.
    expect(error(glr(`"queueTenantHeader":"x tenant"`)))
      .toBe("lb_config.queueTenantHeader must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~), got 'x' followed by ' ' (the rest not shown)");
    expectContains(error(`{"lb_policy":"predicted_latency","lb_config":{"sloTtftHeader":"x-slo:ttft"}}`), "lb_config.sloTtftHeader must be an HTTP header name");
    expectContains(error(`{"lb_policy":"predicted_latency","lb_config":{"sloTpotHeader":"x slo"}}`), "lb_config.sloTpotHeader must be an HTTP header name");
    expect(parsePluginConfig(glr(`"queueTenantHeader":""`)).error).toBe("");
  });

  it("debugHeader is an HTTP token under the cluster policies too", () => {
    expect(error(`{"lb_type":"cluster","lb_policy":"cluster_hash","lb_config":{"clusters":[{"cluster":"a","weight":100}],"debugHeader":"bad hdr:x"}}`))
      .toBe("lb_config.debugHeader must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~), got 'bad' followed by ' ' (the rest not shown)");
    expectContains(error(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],"debugHeader":"x\\r\\ny"}}`),
      "lb_config.debugHeader must be an HTTP header name");
    const ok = parsePluginConfig(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],"debugHeader":"X-Debug"}}`);
    expect(ok.config!.defaultConfig!.debugHeader).toBe("x-debug");
  });

  // Envoy writes and reads any key through the ABI (context.cc replaceHeaderMapValue /
  // getHeaderMapValue: Http::LowerCaseString, so upper case works, lower-cased), but an invalid
  // name fails every request: the upstream codec refuses it (HeaderUtility::checkValidRequestHeaders,
  // 503 "invalid header name"), and a downstream request can never carry it (hash_header).
  it("cluster_header and hash_header are HTTP tokens; upper case is lower-cased; \"\" is the default", () => {
    const CH = `{"lb_type":"cluster","lb_policy":"cluster_hash","lb_config":{"clusters":[{"cluster":"a","weight":100}],`;
    const CM = `{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],`;
    const EH = `{"lb_policy":"endpoint_hash","lb_config":{"serviceFQDN":"r","servicePort":1,`;
    expect(error(CH + `"cluster_header":"x target"}}`))
      .toBe("lb_config.cluster_header must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~), got 'x' followed by ' ' (the rest not shown)");
    expect(error(CH + `"hash_header":"x-user:"}}`))
      .toBe("lb_config.hash_header must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~), got 'x-user' followed by ':'");
    expectContains(error(CM + `"cluster_header":":authority"}}`), "lb_config.cluster_header must be an HTTP header name");
    expectContains(error(CM + `"cluster_header":"x-c\\r\\nx-injected: 1"}}`), "lb_config.cluster_header must be an HTTP header name");
    expectContains(error(EH + `"hash_header":"x user"}}`), "lb_config.hash_header must be an HTTP header name");
    const h = parsePluginConfig(CH + `"cluster_header":"X-Target","hash_header":"X-User"}}`).config!.defaultConfig!;
    expect(h.clusterHash.clusterHeader).toBe("x-target");
    expect(h.clusterHash.hashHeader).toBe("x-user");
    const d = parsePluginConfig(CH + `"cluster_header":"","hash_header":""}}`).config!.defaultConfig!;
    expect(d.clusterHash.clusterHeader).toBe("x-higress-target-cluster");
    expect(d.clusterHash.hashHeader).toBe("x-mse-consumer");
    expect(parsePluginConfig(CM + `"cluster_header":"X-C"}}`).config!.defaultConfig!.clusterMetrics.clusterHeader).toBe("x-c");
    expect(parsePluginConfig(EH + `"hash_header":"X-U"}}`).config!.defaultConfig!.endpointHash.hashHeader).toBe("x-u");
  });

  // The service is written as the cluster_header's value: a control character can be neither a
  // header value (Envoy's validHeaderString, envoy/http/header_map.h; checkValidRequestHeaders) nor
  // a cluster Istio/Higress names, so every request picked for it would get 503.
  it("service names (service_list, clusters[].cluster) hold no control characters", () => {
    expect(error(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["outbound|80||a.dns","b\\r\\nx-injected: 1"]}}`))
      .toBe("lb_config.service_list[1] must be an Envoy cluster name (no control characters), got 'b\\r\\nx-injected: 1'");
    expect(error(`{"lb_type":"cluster","lb_policy":"cluster_hash","lb_config":{"clusters":[{"cluster":"a\\tb","weight":100}]}}`))
      .toBe("lb_config.clusters[0].cluster must be an Envoy cluster name (no control characters), got 'a\\x09b'");
    expect(parsePluginConfig(`{"lb_type":"cluster","lb_policy":"cluster_hash","lb_config":{"clusters":[{"cluster":"outbound|443||llm-a.internal.dns","weight":100}]}}`).error).toBe("");
  });

  it("hosts must be ip:port or host:port", () => {
    const ok = parsePluginConfig(glr(`"staticHosts":["10.0.0.1:8000","[::1]:80","pod-a.vllm.svc:8000"]`));
    expect(ok.error).toBe("");
    expect(ok.config!.defaultConfig!.staticHosts.length).toBe(3);
    expect(error(glr(`"staticHosts":["10.0.0.1 8000"]`))).toBe("lb_config.staticHosts[0] must be ip:port or host:port, got '10.0.0.1 8000'");
    expectContains(error(glr(`"staticHosts":["10.0.0.1:8000 "]`)), "lb_config.staticHosts[0] must be ip:port");
    expectContains(error(glr(`"staticHosts":["10.0.0.1:0"]`)), "lb_config.staticHosts[0] must be ip:port");
    expectContains(error(glr(`"staticHosts":["10.0.0.1"]`)), "lb_config.staticHosts[0] must be ip:port");
    expectContains(error(glr(`"staticHosts":["[zz]:80"]`)), "lb_config.staticHosts[0] must be ip:port");
    expect(error(`{"lb_policy":"global_least_request","lb_config":{"serviceFQDN":"redis|static","servicePort":6379}}`))
      .toBe("lb_config.serviceFQDN must be a host name such as redis.static, got 'redis|static'");
  });

  it("other values the plugin writes somewhere", () => {
    expectContains(error(glr(`"keyPrefix":"a}b"`)), "lb_config.keyPrefix must be non-empty without '{', '}'");
    expectContains(error(glr(`"healthyStatuses":["healthy"]`)), "lb_config.healthyStatuses[0] must be one of Healthy");
    expectContains(error(`{"lb_policy":"endpoint_metrics","lb_config":{"metricsPath":"metrics"}}`), "lb_config.metricsPath must be a path");
  });

  it("a numeric password is refused without printing it", () => {
    const e = error(glr(`"password":987654`));
    expect(e).toBe("lb_config.password must be a string (quote it in YAML), got a number (value not shown)");
    expect(e.includes("987654")).toBe(false);
  });

  it("a value or key with CR/LF is printed escaped, on one line, wherever a message shows it", () => {
    const cases: string[][] = [
      [glr(`"costMode":"count\\nFAKE line"`), "lb_config.costMode must be one of count, bytes, tokens, got 'count\\nFAKE line'"],
      [glr(`"keyPrefix":"a\\r\\nX: y"`), "got 'a\\r\\nX: y'"],
      [glr(`"healthyStatuses":["Healthy\\n"]`), "lb_config.healthyStatuses[0] must be one of Healthy, Degraded, Unhealthy, Draining, Timeout, Unknown, got 'Healthy\\n'"],
      [`{"lb_policy":"endpoint_metrics","lb_config":{"metricsPath":"/m\\r\\n"}}`, "got '/m\\r\\n'"],
      [`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a\\nb"]}}`, "lb_config.service_list[0] must be an Envoy cluster name (no control characters), got 'a\\nb'"],
      [`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],"mode":"Least\\nBusy"}}`, "(case-sensitive), got 'Least\\nBusy'"],
      [glr(`"bad\\r\\nkey":1`), "lb_config.bad\\r\\nkey is not a known key"],
    ];
    for (let i = 0; i < cases.length; i++) {
      const e = error(cases[i][0]);
      expectContains(e, cases[i][1]);
      expect(e.includes("\n") || e.includes("\r")).toBe(false, e);
    }
  });

  it("lb_config written as a string is refused without printing it (it may hold the password)", () => {
    const e = error(`{"lb_policy":"global_least_request","lb_config":"{\\"serviceFQDN\\":\\"r\\",\\"password\\":\\"hunter2\\"}"}`);
    expect(e).toBe("lb_config must be an object, got a string (value not shown)");
    expect(error(`{"lb_policy":"header","lb_config":5}`)).toBe("lb_config must be an object, got 5");
  });

  it("a numeric Redis username is refused without printing it (cluster_metrics too)", () => {
    const e = error(glr(`"username":987654321`));
    expect(e).toBe("lb_config.username must be a string (quote it in YAML), got a number (value not shown)");
    const m = error(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],"global_inflight_enabled":true,
      "serviceFQDN":"r","servicePort":1,"username":4242}}`);
    expect(m).toBe("lb_config.username must be a string (quote it in YAML), got a number (value not shown)");
  });
});
