// Configuration values written the way Higress's ai-load-balancer still reads them (gjson v1.18.0
// Result.Int / Float / Bool / String; higress-parity.md section 1): what Higress reads with the
// meaning the writer meant is accepted with that meaning; what Higress misreads is refused by name.
import { parsePluginConfig, parsePluginConfigBytes } from "../config/rules";
import { LbConfig } from "../config/lb_config";
import { accepted, error } from "./config_helpers";

const GLR = `"lb_policy":"global_least_request","lb_config":{"serviceFQDN":"r","servicePort":6379`;
function glr(extra: string): LbConfig { return accepted("{" + GLR + "," + extra + "}}"); }
function glrError(extra: string): string { return error("{" + GLR + "," + extra + "}}"); }

describe("empty strings (a Helm value left empty): gjson reads them as 0 / false / unset", () => {
  it("lb_type \"\" is endpoint (main.go parseConfig: \"\" -> endpoint)", () => {
    expect(accepted(`{"lb_type":"","lb_policy":"endpoint_metrics"}`).policy).toBe("endpoint_metrics");
    expect(accepted(`{"lb_type":"","lb_policy":"endpoint_metrics"}`).lbType).toBe("endpoint");
  });

  it("a number key \"\" takes its default, as 0 does in Higress", () => {
    const c = glr(`"timeout":"","cleanInterval":"","maxRequestCount":"","database":""`);
    expect(c.redis!.timeoutMs).toBe(3000);
    expect(c.hostStaleMs).toBe(60 * 60000);
    expect(c.maxRequestCount).toBe(0);
    expect(c.redis!.cluster).toBe("outbound|6379||r");
    const p = accepted(`{"lb_policy":"prefix_cache","lb_config":{"serviceFQDN":"r","servicePort":1,"redisKeyTTL":""}}`);
    expect(p.prefix.keyTtlSeconds).toBe(1800);
    expect(accepted(`{"lb_policy":"endpoint_metrics","lb_config":{"rate_limit":""}}`).metrics.rateLimit).toBe(1.0);
  });

  it("servicePort \"\" is a missing port, as in Higress (invalid redis service config)", () => {
    expect(error(`{"lb_policy":"global_least_request","lb_config":{"serviceFQDN":"r","servicePort":""}}`))
      .toBe("lb_config.servicePort is required for lb_policy global_least_request (the Redis port, e.g. 6379)");
  });

  it("a boolean key \"\" takes its default (Higress: ParseBool fails, false)", () => {
    expect(glr(`"enableDetailLog":""`).detailLog).toBe(false);
  });

  it("metric_policy \"\" is default (Higress: neither least nor most)", () => {
    expect(accepted(`{"lb_policy":"endpoint_metrics","lb_config":{"metric_policy":""}}`).metrics.metricPolicy).toBe("default");
  });

  it("lb_policy \"\" is still refused, as in Higress (lb_psolicy  is not supported)", () => {
    expect(error(`{"lb_policy":""}`).startsWith("lb_policy must be one of")).toBe(true);
  });
});

describe("numbers written as strings: what gjson's Int() / Float() read", () => {
  it("an integer key takes a string of digits, leading zeros included (gjson parseInt)", () => {
    expect(glr(`"timeout":"0500"`).redis!.timeoutMs).toBe(500);
    expect(accepted(`{"lb_policy":"global_least_request","lb_config":{"serviceFQDN":"r","servicePort":"06379"}}`).redis!.cluster).toBe("outbound|6379||r");
  });

  it("an integer key refuses a string with a fraction or an exponent (Higress reads 0: the default, or no port)", () => {
    expect(glrError(`"timeout":"1e3"`)).toBe("lb_config.timeout must be an integer in [0, 60000] (milliseconds), got '1e3'");
    expect(glrError(`"maxRequestCount":"10.0"`)).toBe("lb_config.maxRequestCount must be an integer in [0, 1000000000], got '10.0'");
    expect(error(`{"lb_policy":"global_least_request","lb_config":{"serviceFQDN":"r","servicePort":"6379.0"}}`))
      .toBe("lb_config.servicePort must be an integer in [0, 65535], got '6379.0'");
    expect(glrError(`"timeout":"+500"`)).toBe("lb_config.timeout must be an integer in [0, 60000] (milliseconds), got '+500'");
  });

  it("a JSON number with an exponent or a zero fraction is the integer it is (gjson safeInt)", () => {
    expect(glr(`"timeout":1e3`).redis!.timeoutMs).toBe(1000);
    expect(glr(`"timeout":500.0`).redis!.timeoutMs).toBe(500);
  });

  it("a number key takes what Go's ParseFloat reads in decimal (\".5\", \"5.\", \"+0.5\", \"00.5\")", () => {
    const rate = (t: string): f64 => accepted(`{"lb_policy":"endpoint_metrics","lb_config":{"rate_limit":"` + t + `"}}`).metrics.rateLimit;
    expect(rate(".5")).toBe(0.5);
    expect(rate("+0.5")).toBe(0.5);
    expect(rate("00.25")).toBe(0.25);
    expect(rate("1.")).toBe(1.0);
    expect(rate("5e-1")).toBe(0.5);
  });

  it("a number key refuses NaN, infinities, hex and text around the number", () => {
    const bad = ["NaN", "inf", "-Infinity", "0x1p-1", " 0.5", "0.5 ", "0.5x", ".", "+", "-.e1", "1_0"];
    for (let i = 0; i < bad.length; i++) {
      const e = error(`{"lb_policy":"endpoint_metrics","lb_config":{"rate_limit":"` + bad[i] + `"}}`);
      expect(e.startsWith("lb_config.rate_limit must be a number in [0.0, 1.0], got '")).toBe(true, e);
    }
  });
});

describe("booleans written as strings or numbers: what gjson's Bool() reads", () => {
  it("\"true\" / \"false\" (any case), \"1\" / \"0\", \"t\" / \"f\" and the numbers 1 / 0 are read as Higress reads them", () => {
    const yes = [`"true"`, `"TRUE"`, `"True"`, `"t"`, `"T"`, `"1"`, `1`, `true`];
    for (let i = 0; i < yes.length; i++) expect(glr(`"enableDetailLog":` + yes[i]).detailLog).toBe(true, yes[i]);
    const no = [`"false"`, `"FALSE"`, `"f"`, `"0"`, `0`, `false`];
    for (let i = 0; i < no.length; i++) expect(glr(`"enableDetailLog":` + no[i]).detailLog).toBe(false, no[i]);
    const m = accepted(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],"global_inflight_enabled":"false"}}`);
    expect(m.clusterMetrics.globalInflight).toBe(false);
  });

  it("what Bool() misreads is refused, named: \"yes\" / \"on\" (false there), other numbers (true there)", () => {
    expect(glrError(`"enableDetailLog":"yes"`)).toBe("lb_config.enableDetailLog must be true or false, got 'yes'");
    expect(glrError(`"enableDetailLog":"on"`)).toBe("lb_config.enableDetailLog must be true or false, got 'on'");
    expect(glrError(`"enableDetailLog":2`)).toBe("lb_config.enableDetailLog must be true or false, got 2");
    expect(glrError(`"enableDetailLog":0.5`)).toBe("lb_config.enableDetailLog must be true or false, got 0.5");
    expect(glrError(`"enableDetailLog":["true"]`)).toBe("lb_config.enableDetailLog must be true or false, got an array");
  });
});

describe("duplicate keys: gjson's Get() reads the first, its Map() (the SDK's _rules_) the last", () => {
  it("a key written twice in one object is refused, named, at every level (value not shown)", () => {
    expect(error(`{"lb_policy":"endpoint_metrics","lb_policy":"prefix_cache"}`)).toBe("lb_policy appears more than once");
    expect(glrError(`"password":"a","password":"b"`)).toBe("lb_config.password appears more than once");
    expect(error(`{"_rules_":[{"_match_route_":["r"],"_match_route_":["s"],"lb_policy":"endpoint_metrics"}]}`))
      .toBe("_rules_[0]._match_route_ appears more than once");
    expect(error(`{"_rules_":[],"_rules_":[{"_match_route_":["r"],"lb_policy":"endpoint_metrics"}]}`)).toBe("_rules_ appears more than once");
    expect(error(`{"lb_type":"cluster","lb_policy":"cluster_hash","lb_config":{"clusters":[{"cluster":"a","cluster":"b","weight":100}]}}`))
      .toBe("lb_config.clusters[0].cluster appears more than once");
  });
});

describe("configuration bytes that are not UTF-8 (plain Envoy may deliver a BytesValue)", () => {
  it("an invalid sequence inside a string is one U+FFFD and never takes the quote after it", () => {
    const head = String.UTF8.encode(`{"lb_policy":"endpoint_metrics","lb_config":{"loraAdapters":["a`);
    const tail = String.UTF8.encode(`","b"]}}`);
    const src = new Uint8Array(head.byteLength + 1 + tail.byteLength);
    src.set(Uint8Array.wrap(head), 0);
    src[head.byteLength] = 0xC3; // a lead byte without its continuation: the next byte is the quote
    src.set(Uint8Array.wrap(tail), head.byteLength + 1);
    const r = parsePluginConfigBytes(src);
    expect(r.error).toBe("");
    const lora = r.config!.defaultConfig!.metrics.loraAdapters;
    expect(lora.length).toBe(2);
    expect(lora[0]).toBe("a\uFFFD");
    expect(lora[1]).toBe("b");
  });
});
