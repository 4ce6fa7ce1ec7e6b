// Property-based fuzzing of /metrics texts through the release .wasm (endpoint_metrics): random
// Prometheus text and mutations of the real fixtures (test/fixtures/metrics/), delivered both as
// Higress health-check metrics and as polled /metrics bodies. Properties: the VM never traps and
// every request is still forwarded (a pick or the fallback) or answered below 500.
import { readFileSync, readdirSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { TestHost } from "../../host-test/facade/index.js";
import { CLUSTER, FUZZ_SEED, FUZZ_TIMEOUT_MS, HOSTS, METRICS_CLUSTER, REDIS_CLUSTER, WASM, outcome, runs } from "./fuzz-host.js";
import { mutatedMetrics, randomMetrics } from "./arbitraries.js";

const dir = "test/fixtures/metrics";
const fixtures = readdirSync(dir).filter((f) => f.endsWith(".txt")).map((f) => readFileSync(`${dir}/${f}`, "utf8"));
const metricsText = fc.oneof(randomMetrics, mutatedMetrics(fixtures));
const texts = fc.array(metricsText, { minLength: HOSTS.length, maxLength: HOSTS.length });

const hostsWith = (ts: string[]) => HOSTS.map((address, i) => ({ address, metrics: ts[i] }));
const polled = { lb_policy: "endpoint_metrics", lb_config: { metricsSource: "poll", metricsCluster: METRICS_CLUSTER, scrapeIntervalMs: 1000, staleAfterMs: 3000 } };
const fromHealthChecks = { lb_policy: "endpoint_metrics", lb_config: {} };
// Weighted scoring normalises each metric over the candidates: an infinite queue once made every
// score NaN and the pick index an empty list (a trap the filter tree never reached).
const weighted = { lb_policy: "endpoint_metrics", lb_config: { scoring: "weighted", latencyWeight: 1 } };

function chat(h: TestHost) {
  const s = h.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route: "llm", headers: { "content-type": "application/json" } });
  s.sendRequestHeaders(false);
  s.sendRequestBody('{"model":"m","messages":[{"role":"user","content":"hi"}]}', true);
  return s;
}

let picks = 0;
function served(h: TestHost, s: ReturnType<typeof chat>): void {
  if (s.overrideHost.requested !== null) picks++;
  expect(h.vms.find((v) => v.failed)?.failureReason ?? null).toBeNull();
  const o = outcome(s);
  expect(o.forwarded || (o.localStatus !== null && o.localStatus < 500), JSON.stringify(o)).toBe(true);
  s.sendResponseHeaders({ ":status": "200" }, true);
  s.complete();
}

describe("fuzz: /metrics texts through the release .wasm", () => {
  const opened: TestHost[] = [];
  afterAll(() => { for (const h of opened) h.close(); });
  const make = async (configuration: object, ts: string[]) => {
    const h = await TestHost.create({ wasm: WASM, configuration, clusters: { [CLUSTER]: hostsWith(ts), [METRICS_CLUSTER]: [] }, redisClusters: [REDIS_CLUSTER], logLevel: "warn" });
    opened.push(h);
    expect(h.configured.every(Boolean)).toBe(true);
    return h;
  };

  it.each([["the filter tree", fromHealthChecks], ["weighted scoring", weighted]])("health-check metrics, %s: random and mutated texts never trap, requests are served", async (_name, cfg) => {
    let h = await make(cfg, HOSTS.map(() => fixtures[0]));
    await fc.assert(fc.asyncProperty(texts, async (ts) => {
      if (h.vms.some((v) => v.failed)) h = await make(cfg, ts);
      h.setUpstreamHosts(CLUSTER, hostsWith(ts));
      h.advance(1100); // past the re-parse interval
      served(h, chat(h));
    }), { seed: FUZZ_SEED, numRuns: runs(200) });
    expect(picks).toBeGreaterThan(20); // texts that parse led to metric picks, the rest to fallbacks
  }, FUZZ_TIMEOUT_MS);

  it("polled /metrics bodies (any status, any text): never trap, requests are served", async () => {
    let h = await make(polled, HOSTS.map(() => ""));
    const status = fc.constantFrom(200, 200, 200, 404, 500);
    let polls = 0;
    await fc.assert(fc.asyncProperty(texts, status, async (ts, st) => {
      if (h.vms.some((v) => v.failed)) h = await make(polled, HOSTS.map(() => ""));
      h.advance(1000);
      for (const c of [...h.httpCalls]) polls++, c.respond({ status: st, headers: { "content-type": "text/plain" }, body: ts[HOSTS.indexOf(c.header("x-envoy-original-dst-host") ?? "") % ts.length] ?? ts[0] });
      served(h, chat(h));
    }), { seed: FUZZ_SEED, numRuns: runs(200) });
    expect(polls).toBeGreaterThan(200);
  }, FUZZ_TIMEOUT_MS);
});
