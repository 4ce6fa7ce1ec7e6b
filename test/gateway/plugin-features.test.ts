// Higress extensions through the real gateway: override host honoured/refused by the router,
// get_upstream_hosts fed by active health checks (/metrics body), Redis calls to a real
// redis-server, a bodiless GET held by the guest until the Redis reply (0_2_100), and a route that
// skips the filter.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Gateway } from "../../host-test/gateway/server.js";
import { startRedis, type RedisFixture } from "../helpers/redis.js";
import { echoHandler, startUpstream, waitFor, type Upstream, type UpstreamHandler } from "../helpers/upstreams.js";
import { buildGuest } from "../host/guests/build.js";
import { gatewayConfig, messages, request } from "./gateway-helpers.js";

const REDIS = "outbound|6379||redis.static";
const POOL = "outbound|8000||vllm.static";
let a: Upstream, b: Upstream, c: Upstream;
let redis: RedisFixture;
let gw: Gateway;

const withMetrics = (metrics: string | null): UpstreamHandler => (req, res, body, self) => {
  if (req.url === "/metrics") {
    if (metrics === null) res.writeHead(500).end();
    else res.writeHead(200, { "content-type": "text/plain" }).end(metrics);
    return;
  }
  echoHandler(req, res, body, self);
};

beforeAll(async () => {
  const wasm = await buildGuest("higress-100");
  redis = await startRedis();
  a = await startUpstream(withMetrics('vllm:num_requests_running{model="m"} 1\n'));
  b = await startUpstream(withMetrics("vllm:num_requests_running 2\n"));
  c = await startUpstream(withMetrics(null)); // fails its health check: Unhealthy
  gw = await startGateway(gatewayConfig({
    workers: 2,
    clusters: [
      { name: POOL, endpoints: [a.address, b.address, c.address], health_check: { path: "/metrics", interval_ms: 60000, timeout_ms: 1000 } },
      { name: REDIS, type: "redis", endpoints: [`${redis.host}:${redis.port}`] },
    ],
    routes: [
      { name: "raw", match: { prefix: "/raw" }, cluster: POOL, plugin: false },
      { name: "llm", match: { prefix: "/" }, cluster: POOL },
    ],
    plugin: { wasm, configuration: { cfg: `redis=${REDIS}` } },
  }), { lbSeed: 7 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([a, b, c].map((u) => u?.close()));
  await redis?.stop();
});

const upstreamOf = (body: string) => JSON.parse(body).upstream as string;

describe("override host through the router", () => {
  it("a healthy host of the routed cluster is honoured", async () => {
    for (const target of [a.address, b.address]) {
      const r = await request(gw.url, { headers: { "x-override": target } });
      expect(upstreamOf(r.body)).toBe(target);
    }
    expect(gw.stats.overrideHonoured).toBe(2);
  });

  it("an unhealthy host is refused and the cluster's load balancer picks a healthy one", async () => {
    const before = gw.stats.overrideRefused;
    for (let i = 0; i < 4; i++) {
      const r = await request(gw.url, { headers: { "x-override": c.address } });
      expect([a.address, b.address]).toContain(upstreamOf(r.body));
    }
    expect(c.requests.filter((q) => q.path !== "/metrics")).toHaveLength(0);
    expect(gw.stats.overrideRefused - before).toBe(4);
  });
});

describe("upstream hosts from health checks", () => {
  it("get_upstream_hosts carries each host's health and last /metrics body", async () => {
    await request(gw.url, { headers: { "x-hosts": "1" } });
    const line = messages(gw).find((m) => m.startsWith("hosts status=0 "))!;
    expect(line).toContain(`${a.address}=${JSON.stringify({ health_status: "Healthy", metrics: 'vllm:num_requests_running{model="m"} 1\n' })}`);
    expect(line).toContain(`${c.address}=${JSON.stringify({ health_status: "Unhealthy", metrics: "" })}`);
  });
});

describe("redis through the gateway", () => {
  it("a bodiless GET held for a Redis reply goes upstream once the guest continues", async () => {
    const r1 = await request(gw.url, { headers: { "x-redis-cmd": "INCR gw-counter" } });
    const r2 = await request(gw.url, { headers: { "x-redis-cmd": "INCR gw-counter" } });
    expect([r1.status, r2.status]).toEqual([200, 200]);
    const replies = messages(gw).filter((m) => m.startsWith("redis_reply")).map((m) => m.split("reply=")[1]);
    expect(replies.slice(-2)).toEqual([":1|", ":2|"]);
    // Both worker VMs initialised their own client.
    expect(messages(gw).filter((m) => m === "redis_init status=0")).toHaveLength(2);
  });

  it("the Redis reply can pin the upstream before the request is forwarded", async () => {
    const r = await request(gw.url, { headers: { "x-redis-cmd": "GET nothing", "x-after-redis": `override:${b.address}` } });
    expect(upstreamOf(r.body)).toBe(b.address);
  });

  it("the guest can answer locally from the Redis reply", async () => {
    const r = await request(gw.url, { headers: { "x-redis-cmd": "INCR limit", "x-after-redis": "local" } });
    expect(r.status).toBe(429);
    expect(r.body).toBe("slow down");
  });
});

describe("routes without the filter", () => {
  it("pass straight through (no guest callback runs)", async () => {
    const before = messages(gw).length;
    const r = await request(gw.url, { path: "/raw/x", headers: { "x-override": c.address } });
    expect([a.address, b.address]).toContain(upstreamOf(r.body));
    await waitFor(() => (gw.stats.endings.get("complete") ?? 0) > 0);
    expect(messages(gw).slice(before).filter((m) => m.startsWith("request_headers"))).toHaveLength(0);
  });
});
