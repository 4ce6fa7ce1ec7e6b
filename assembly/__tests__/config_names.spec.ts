// Every key that names an HTTP header is an RFC 9110 token, whichever policy reads it: a name the
// plugin writes (cluster_header) or reads (hash_header, the SLO and tenant headers) that no request
// can carry would make every request fail or fall back, and a CR/LF in it would split log lines.
// Envoy cluster names the plugin writes into a header or calls carry no control character.
import { accepted, error } from "./config_helpers";

const METRICS = `{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],`;
const HASH = `{"lb_type":"cluster","lb_policy":"cluster_hash","lb_config":{"clusters":[{"cluster":"a","weight":100}],`;
const EHASH = `{"lb_policy":"endpoint_hash","lb_config":{"serviceFQDN":"r","servicePort":1,`;
const SLO = `{"lb_policy":"predicted_latency","lb_config":{`;
const GLR = `{"lb_policy":"global_least_request","lb_config":{"serviceFQDN":"r","servicePort":1,`;

const TOKEN_RULE = " must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)";

describe("header-name keys of every policy", () => {
  it("a name with a space, ':' or CR/LF is refused, naming the key", () => {
    const cases: string[][] = [
      [METRICS + `"cluster_header":"x target"}}`, "lb_config.cluster_header"],
      [HASH + `"cluster_header":"x:target"}}`, "lb_config.cluster_header"],
      [HASH + `"hash_header":"x-user\\r\\nx-evil"}}`, "lb_config.hash_header"],
      [EHASH + `"hash_header":"x session"}}`, "lb_config.hash_header"],
      [SLO + `"sloTtftHeader":"x slo"}}`, "lb_config.sloTtftHeader"],
      [SLO + `"sloTpotHeader":"x(slo)"}}`, "lb_config.sloTpotHeader"],
      [GLR + `"queueTenantHeader":"x tenant"}}`, "lb_config.queueTenantHeader"],
    ];
    for (let i = 0; i < cases.length; i++) {
      const e = error(cases[i][0]);
      expect(e.startsWith(cases[i][1] + TOKEN_RULE)).toBe(true, e);
      expect(e.includes("\n") || e.includes("\r")).toBe(false, e);
    }
  });

  it("valid names are lower-cased; \"\" keeps its meaning (Higress's default; no SLO or tenant header)", () => {
    expect(accepted(METRICS + `"cluster_header":"X-Target"}}`).clusterMetrics.clusterHeader).toBe("x-target");
    expect(accepted(METRICS + `"cluster_header":""}}`).clusterMetrics.clusterHeader).toBe("x-higress-target-cluster");
    expect(accepted(HASH + `"hash_header":"","cluster_header":""}}`).clusterHash.hashHeader).toBe("x-mse-consumer");
    expect(accepted(EHASH + `"hash_header":"X-Session"}}`).endpointHash.hashHeader).toBe("x-session");
    expect(accepted(SLO + `"sloTtftHeader":"","sloTpotHeader":"X-Tpot"}}`).slo.tpotHeader).toBe("x-tpot");
    expect(accepted(SLO + `"sloTtftHeader":""}}`).slo.ttftHeader).toBe("");
    expect(accepted(GLR + `"queueTenantHeader":""}}`).queue.tenantHeader).toBe("");
  });
});

describe("Envoy cluster names the plugin writes into a header or calls", () => {
  it("a control character in service_list, clusters[i].cluster or metricsCluster is refused, named", () => {
    expect(error(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["outbound|80||a","b\\r\\nx-evil: 1"]}}`))
      .toBe("lb_config.service_list[1] must be an Envoy cluster name (no control characters), got 'b\\r\\nx-evil: 1'");
    expect(error(`{"lb_type":"cluster","lb_policy":"cluster_hash","lb_config":{"clusters":[{"cluster":"a\\u0000","weight":100}]}}`))
      .toBe("lb_config.clusters[0].cluster must be an Envoy cluster name (no control characters), got 'a\\x00'");
    expect(error(`{"lb_policy":"endpoint_metrics","lb_config":{"metricsSource":"poll","metricsCluster":"dst\\n"}}`))
      .toBe("lb_config.metricsCluster must be an Envoy cluster name (no control characters), got 'dst\\n'");
    expect(accepted(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["outbound|80||a.svc.cluster.local"]}}`).clusterMetrics.services[0])
      .toBe("outbound|80||a.svc.cluster.local");
  });
});

describe("other names", () => {
  it("target_metric is a Prometheus metric name (a name no /metrics line can carry never matches)", () => {
    expect(accepted(`{"lb_policy":"endpoint_metrics","lb_config":{"metric_policy":"least","target_metric":"vllm:num_requests_waiting"}}`).metrics.targetMetric)
      .toBe("vllm:num_requests_waiting");
    expect(error(`{"lb_policy":"endpoint_metrics","lb_config":{"metric_policy":"least","target_metric":"vllm:num_requests_waiting{model=\\"a\\"}"}}`))
      .toBe("lb_config.target_metric must be a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*), got 'vllm:num_requests_waiting{model=\"a\"}'");
    expect(error(`{"lb_policy":"endpoint_metrics","lb_config":{"target_metric":"9lives"}}`).startsWith("lb_config.target_metric must be a Prometheus metric name")).toBe(true);
  });

  it("global_inflight_key_prefix is a key prefix as keyPrefix is (it is inside every key's hash tag); \"\" is Higress's default", () => {
    const base = `{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],"mode":"AdaptiveScore",`;
    expect(error(base + `"global_inflight_key_prefix":"a}b"}}`))
      .toBe("lb_config.global_inflight_key_prefix must be non-empty without '{', '}', spaces or control characters (it is inside every key's hash tag), got 'a}b'");
    expect(accepted(base + `"global_inflight_key_prefix":""}}`).clusterMetrics.globalKeyPrefix).toBe("higress:adaptive_score_inflight");
    expect(accepted(base + `"global_inflight_key_prefix":"my:prefix"}}`).clusterMetrics.globalKeyPrefix).toBe("my:prefix");
  });

  it("cluster_metrics mode \"\" is LeastBusy, as a missing mode (a choice left empty is its default)", () => {
    expect(accepted(`{"lb_type":"cluster","lb_policy":"cluster_metrics","lb_config":{"service_list":["a"],"mode":""}}`).clusterMetrics.mode).toBe(0);
  });
});
