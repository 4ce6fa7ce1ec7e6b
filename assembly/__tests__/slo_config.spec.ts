// predicted_latency and gateway-side queueing keys: defaults, values read, bad values refused with
// a message naming the key.
import { parsePluginConfig } from "../config/rules";

function error(json: string): string {
  const r = parsePluginConfig(json);
  expect(r.config).toBeNull();
  return r.error;
}

const REDIS = `"serviceFQDN":"redis.static","servicePort":6379`;

describe("predicted_latency and queue keys", () => {
  it("defaults: no SLO, tpot_fit, queue margin 2, 1% exploration, queue off", () => {
    const r = parsePluginConfig(`{"lb_policy":"predicted_latency","lb_config":{${REDIS}}}`);
    expect(r.error).toBe("");
    const c = r.config!.defaultConfig!;
    expect(c.policy).toBe("predicted_latency");
    expect(c.slo.ttftMs).toBe(0.0);
    expect(c.slo.pick).toBe("tpot_fit");
    expect(c.slo.queueMargin).toBe(2.0);
    expect(c.slo.exploration).toBe(0.01);
    expect(c.slo.ttftHeader).toBe("x-slo-ttft-ms");
    expect(c.queue.capacity).toBe(0);
  });
  it("reads the keys (header names lower-cased)", () => {
    const r = parsePluginConfig(`{"lb_policy":"predicted_latency","lb_config":{${REDIS},"sloTtftMs":500,"sloTpotMs":40,"sloPick":"best_fit","sloTtftHeader":"X-TTFT","queueCapacity":16,"queueMaxWaitMs":2000,"queueTenantHeader":"X-Tenant"}}`);
    expect(r.error).toBe("");
    const c = r.config!.defaultConfig!;
    expect(c.slo.ttftMs).toBe(500.0);
    expect(c.slo.tpotMs).toBe(40.0);
    expect(c.slo.pick).toBe("best_fit");
    expect(c.slo.ttftHeader).toBe("x-ttft");
    expect(parsePluginConfig(`{"lb_policy":"predicted_latency","lb_config":{${REDIS},"sloPick":"most_headroom","sloQueueMargin":0.5}}`).config!.defaultConfig!.slo.queueMargin).toBe(0.5);
    expect(c.queue.capacity).toBe(16);
    expect(c.queue.maxWaitMs).toBe(2000);
    expect(c.queue.tenantHeader).toBe("x-tenant");
  });
  it("refuses bad values naming the key", () => {
    expect(error(`{"lb_policy":"predicted_latency","lb_config":{"sloPick":"worst"}}`).includes("lb_config.sloPick")).toBe(true);
    expect(error(`{"lb_policy":"predicted_latency","lb_config":{"modelDecay":0.1}}`).includes("lb_config.modelDecay")).toBe(true);
    expect(error(`{"lb_policy":"predicted_latency","lb_config":{"sloPick":"tpot"}}`).includes("lb_config.sloPick")).toBe(true);
    expect(error(`{"lb_policy":"predicted_latency","lb_config":{"sloQueueMargin":-1}}`).includes("lb_config.sloQueueMargin")).toBe(true);
    expect(error(`{"lb_policy":"global_least_request","lb_config":{${REDIS},"queueCapacity":4,"queuePollMs":100,"queueEntryTtlMs":150}}`).includes("lb_config.queueEntryTtlMs")).toBe(true);
    expect(error(`{"lb_policy":"global_least_request","lb_config":{${REDIS},"queueCapacity":-1}}`).includes("lb_config.queueCapacity")).toBe(true);
  });
});
