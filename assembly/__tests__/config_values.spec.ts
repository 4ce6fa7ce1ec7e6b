// Configuration values written the way Higress's ai-load-balancer still reads them (gjson v1.18.0
// Result.Int / Float / Bool / String; higress-parity.md section 1): what Higress reads with the
// meaning the writer meant is accepted with that meaning; what Higress misreads is refused by name.
import { parsePluginConfig } from "../config/rules";
import { LbConfig } from "../config/lb_config";

function accepted(json: string): LbConfig {
  const r = parsePluginConfig(json);
  expect(r.error).toBe("", json);
  return r.config!.defaultConfig!;
}

function error(json: string): string {
  const r = parsePluginConfig(json);
  expect(r.config).toBeNull(json);
  return r.error;
}

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
