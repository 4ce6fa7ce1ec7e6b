// Upstream host listing and override (higress-abi.md "Upstream host selection"; Envoy
// CommonLbConfig.override_host_status default UNKNOWN/HEALTHY/DEGRADED; override only matters
// before the router picks a host).
import { beforeAll, describe, expect, it } from "vitest";
import { TestHost } from "../../host-test/facade/index.js";
import { decideUpstream, eligibleHosts } from "../../host-test/abi/upstream-selection.js";
import { buildGuest } from "./guests/build.js";

let higress: string, scripted: string;
beforeAll(async () => { [higress, scripted] = await Promise.all([buildGuest("higress-100"), buildGuest("scripted-100")]); });

const C = "outbound|8000||vllm.static";
const METRICS = 'vllm:num_requests_waiting{model_name="m"} 3\nvllm:gpu_cache_usage_perc 0.5\n';
const hosts = () => ({
  [C]: [
    { address: "10.0.0.1:8000", health: "Healthy" as const, metrics: METRICS },
    { address: "10.0.0.2:8000", health: "Unhealthy" as const },
    { address: "10.0.0.3:8000", health: "Degraded" as const },
  ],
});

describe("proxy_get_upstream_hosts", () => {
  it("returns the routed cluster's hosts as a pair map with JSON values (metrics escaped)", async () => {
    const h = await TestHost.create({ wasm: higress, clusters: hosts() });
    h.stream({ headers: { "x-hosts": "1" } }).sendRequestHeaders(true);
    const line = h.logMessages().find((m) => m.startsWith("hosts status=0 "))!;
    const entries = line.slice("hosts status=0 ".length).split(/;(?=10\.)/).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]);
    expect(entries.map(([k]) => k)).toEqual(["10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000"]);
    expect(JSON.parse(entries[0][1])).toEqual({ health_status: "Healthy", metrics: METRICS });
    expect(JSON.parse(entries[1][1])).toEqual({ health_status: "Unhealthy", metrics: "" });
  });

  it("an empty cluster is Ok with an empty map", async () => {
    const h = await TestHost.create({ wasm: higress, clusters: { [C]: [] } });
    h.stream({ headers: { "x-hosts": "1" } }).sendRequestHeaders(true);
    expect(h.logMessages()).toContain("hosts status=0 ");
  });
});

describe("proxy_set_upstream_override_host", () => {
  it("a healthy host of the cluster is honoured", async () => {
    const h = await TestHost.create({ wasm: higress, clusters: hosts() });
    const s = h.stream({ headers: { "x-override": "10.0.0.1:8000" } });
    s.sendRequestHeaders(true);
    expect(s.overrideHost).toMatchObject({ requested: "10.0.0.1:8000", honoured: true, refusedReason: null });
    expect(s.forwarded?.upstream.address).toBe("10.0.0.1:8000");
  });

  it("a degraded host is honoured (default override statuses)", async () => {
    const h = await TestHost.create({ wasm: higress, clusters: hosts() });
    const s = h.stream({ headers: { "x-override": "10.0.0.3:8000" } });
    s.sendRequestHeaders(true);
    expect(s.overrideHost.honoured).toBe(true);
  });

  it("an unhealthy host is refused: the cluster's load balancer picks a healthy one", async () => {
    const h = await TestHost.create({ wasm: higress, clusters: hosts() });
    const s = h.stream({ headers: { "x-override": "10.0.0.2:8000" } });
    s.sendRequestHeaders(true);
    expect(s.overrideHost).toMatchObject({ honoured: false, refusedReason: "status_not_allowed" });
    expect(s.forwarded?.upstream).toMatchObject({ address: "10.0.0.1:8000", via: "lb" });
  });

  it("an address outside the cluster is refused", async () => {
    const h = await TestHost.create({ wasm: higress, clusters: hosts() });
    const s = h.stream({ headers: { "x-override": "192.168.9.9:1" } });
    s.sendRequestHeaders(true);
    expect(s.overrideHost.refusedReason).toBe("not_in_cluster");
    expect(s.forwarded?.upstream.via).toBe("lb");
  });

  it("set after a redis reply, before forwarding, is honoured", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: "redis=r", redisClusters: ["r"], clusters: hosts() });
    const s = h.stream({ headers: { "x-redis-cmd": "GET pick", "x-after-redis": "override:10.0.0.3:8000" } });
    s.sendRequestHeaders(true);
    h.redisCalls[0].reply("$12\r\n10.0.0.3:8000\r\n");
    expect(s.forwarded?.upstream).toMatchObject({ address: "10.0.0.3:8000", via: "override" });
  });

  it("set after the request was forwarded is ignored", async () => {
    const h = await TestHost.create({ wasm: higress, clusters: hosts() });
    const s = h.stream({ headers: { "x-late-override": "10.0.0.3:8000" } });
    s.sendRequestHeaders(true);
    s.sendResponseHeaders({ ":status": "200" }, true);
    expect(h.logMessages()).toContain("late override status=0");
    expect(s.overrideHost).toMatchObject({ requested: null, lateRequests: 1 });
    expect(s.forwarded?.upstream.address).toBe("10.0.0.1:8000");
  });
});

describe("router without an eligible host", () => {
  it("answers 503 no healthy upstream (UH) through the filter's response path", async () => {
    const h = await TestHost.create({ wasm: scripted, clusters: { [C]: [{ address: "10.0.0.2:8000", health: "Unhealthy" }] } });
    const s = h.stream();
    s.sendRequestHeaders(true);
    expect(s.response.status).toBe(503);
    expect(s.response.body.toString()).toBe("no healthy upstream");
    expect(s.response.headers["x-filtered"]).toBe("1");
    s.complete();
    expect(h.logMessages()).toContain(`log ctx=${s.contextId} code=503 flags=2 details=no_healthy_upstream upstream=`);
  });
});

describe("selection rules (pure)", () => {
  it("degraded hosts are used only when no healthy host is left", () => {
    const hs = hosts()[C].map((x) => ({ ...x, metrics: "" }));
    expect(eligibleHosts(hs).map((x) => x.address)).toEqual(["10.0.0.1:8000"]);
    expect(eligibleHosts(hs.filter((x) => x.health !== "Healthy")).map((x) => x.address)).toEqual(["10.0.0.3:8000"]);
  });

  it("panic mode (when enabled) spreads over all hosts", () => {
    const hs = hosts()[C].map((x) => ({ ...x, metrics: "" }));
    expect(eligibleHosts(hs, 50)).toHaveLength(3);
    expect(decideUpstream(null, [], () => null).via).toBe("none");
  });
});
