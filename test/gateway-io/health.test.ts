// Active HTTP health checks against real node:http upstreams: Envoy's initial state and
// thresholds, timeouts, degraded hosts, the kept /metrics body, the periodic loop.
import http from "node:http";
import type net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ClusterConfig, HealthCheckConfig } from "../../host-test/gateway/config.js";
import { HealthChecker, MAX_HEALTH_BODY_BYTES, type HealthStatus } from "../../host-test/gateway/health.js";
import { freePort } from "../helpers/ports.js";

type Mode = "ok" | "fail" | "hang" | "delayed" | "degraded" | "big";

interface Upstream {
  address: string;
  mode: Mode;
  body: string;
  requests: Array<{ path: string; userAgent: string }>;
  close(): Promise<void>;
}

const servers: Upstream[] = [];
const checkers: HealthChecker[] = [];

async function upstream(mode: Mode = "ok"): Promise<Upstream> {
  const state: Upstream = {
    address: "",
    mode,
    body: "vllm:num_requests_waiting 0\n",
    requests: [],
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server = http.createServer((req, res) => {
    state.requests.push({ path: req.url ?? "", userAgent: req.headers["user-agent"] ?? "" });
    switch (state.mode) {
      case "ok": res.end(state.body); break;
      case "fail": res.writeHead(503).end("overloaded"); break;
      case "hang": break; // never answers: the check times out (afterEach closes the connection)
      case "delayed": setTimeout(() => res.end(state.body), 300).unref(); break;
      case "degraded": res.writeHead(200, { "x-envoy-degraded": "1" }).end(state.body); break;
      case "big": res.end("m".repeat(100 * 1024)); break;
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  state.address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  servers.push(state);
  return state;
}

function checker(endpoints: string[], hc: Partial<HealthCheckConfig> | null, onChange?: (a: string, s: HealthStatus) => void) {
  const cluster: ClusterConfig = {
    name: "outbound|8000||vllm.static",
    type: "static",
    lb_policy: "round_robin",
    connect_timeout_ms: 1000,
    endpoints,
    health_check: hc === null ? null : {
      path: "/metrics", interval_ms: 60_000, timeout_ms: 1000, unhealthy_threshold: 2, healthy_threshold: 2, ...hc,
    },
  };
  const c = new HealthChecker(cluster, { onChange });
  checkers.push(c);
  return c;
}

const healthOf = (c: HealthChecker, address: string) => c.snapshot().find((h) => h.address === address)!.health;

afterEach(async () => {
  for (const c of checkers.splice(0)) c.stop();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("HealthChecker", () => {
  it("without health_check reports every host Healthy with an empty body", async () => {
    const c = checker(["10.0.0.1:80", "10.0.0.2:80"], null);
    await c.checkNow();
    expect(c.snapshot()).toEqual([
      { address: "10.0.0.1:80", health: "Healthy", body: "" },
      { address: "10.0.0.2:80", health: "Healthy", body: "" },
    ]);
  });

  it("starts hosts Unhealthy and marks them Healthy on the first pass, whatever healthy_threshold says", async () => {
    const up = await upstream();
    const c = checker([up.address], { healthy_threshold: 3 });
    expect(c.snapshot()).toEqual([{ address: up.address, health: "Unhealthy", body: "" }]);
    await c.checkNow();
    expect(c.snapshot()).toEqual([{ address: up.address, health: "Healthy", body: up.body }]);
    expect(up.requests).toEqual([{ path: "/metrics", userAgent: "Envoy/HC" }]);
  });

  it("a non-200 answer marks a host Unhealthy at once; recovery needs healthy_threshold passes", async () => {
    const up = await upstream();
    const c = checker([up.address], { unhealthy_threshold: 3, healthy_threshold: 2 });
    await c.checkNow();
    up.mode = "fail";
    await c.checkNow();
    expect(healthOf(c, up.address)).toBe("Unhealthy");
    up.mode = "ok";
    await c.checkNow();
    expect(healthOf(c, up.address)).toBe("Unhealthy");
    await c.checkNow();
    expect(healthOf(c, up.address)).toBe("Healthy");
  });

  it("timeouts and refused connections count toward unhealthy_threshold, and keep the last body", async () => {
    const up = await upstream();
    const c = checker([up.address], { unhealthy_threshold: 2, healthy_threshold: 1 });
    await c.checkNow();
    up.mode = "hang";
    await c.checkNow();
    expect(healthOf(c, up.address)).toBe("Healthy");
    await c.checkNow();
    expect(c.snapshot()[0]).toEqual({ address: up.address, health: "Unhealthy", body: up.body });

    const refused = `127.0.0.1:${await freePort()}`;
    const c2 = checker([refused, up.address], { unhealthy_threshold: 1 });
    up.mode = "ok";
    await c2.checkNow();
    expect(c2.snapshot().map((h) => h.health)).toEqual(["Unhealthy", "Healthy"]);
  });

  it("a success resets the count of network failures", async () => {
    const up = await upstream();
    const c = checker([up.address], { unhealthy_threshold: 2 });
    await c.checkNow();
    for (const mode of ["hang", "ok", "hang", "ok"] as const) {
      up.mode = mode;
      await c.checkNow();
      expect(healthOf(c, up.address)).toBe("Healthy");
    }
  });

  it("x-envoy-degraded on a passing check makes the host Degraded until a plain pass", async () => {
    const up = await upstream("degraded");
    const changes: Array<[string, HealthStatus]> = [];
    const c = checker([up.address], {}, (a, s) => changes.push([a, s]));
    await c.checkNow();
    expect(healthOf(c, up.address)).toBe("Degraded");
    up.mode = "ok";
    await c.checkNow();
    up.mode = "fail";
    await c.checkNow();
    expect(changes).toEqual([[up.address, "Degraded"], [up.address, "Healthy"], [up.address, "Unhealthy"]]);
  });

  it("keeps at most 64 KiB of the body", async () => {
    const up = await upstream("big");
    const c = checker([up.address], {});
    await c.checkNow();
    const [h] = c.snapshot();
    expect(h!.health).toBe("Healthy");
    expect(h!.body).toBe("m".repeat(MAX_HEALTH_BODY_BYTES));
  });

  it("keeps no body when the check path is not /metrics", async () => {
    const up = await upstream();
    const c = checker([up.address], { path: "/health" });
    await c.checkNow();
    expect(c.snapshot()).toEqual([{ address: up.address, health: "Healthy", body: "" }]);
    expect(up.requests[0]!.path).toBe("/health");
  });

  it("start() checks at once and then every interval; stop() ends the loop", async () => {
    const up = await upstream();
    const c = checker([up.address], { interval_ms: 20 });
    c.start();
    for (let i = 0; i < 300 && up.requests.length < 4; i++) await new Promise((r) => setTimeout(r, 10));
    expect(up.requests.length).toBeGreaterThanOrEqual(4);
    expect(healthOf(c, up.address)).toBe("Healthy");
    c.stop();
    await new Promise((r) => setTimeout(r, 30)); // let a check already in flight land
    const seen = up.requests.length;
    await new Promise((r) => setTimeout(r, 150));
    expect(up.requests.length).toBe(seen);
  });

  it("checkNow() joins a check already in flight instead of sending a second one", async () => {
    const up = await upstream("delayed");
    const c = checker([up.address], {});
    await Promise.all([c.checkNow(), c.checkNow()]);
    expect(up.requests).toHaveLength(1);
    expect(healthOf(c, up.address)).toBe("Healthy");
  });
});
