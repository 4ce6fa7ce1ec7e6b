// Envoy's RouteAction.cluster_header through the real gateway (host-test/gateway/cluster-header.ts):
// the request goes to the cluster named by the header's first value; an absent or unknown name is
// the router's cluster_not_found answer (503, empty body, flag NC); a Wasm filter that writes the
// header in on_request_headers re-routes the request (the Higress fork clears the route cache), and
// does not when it set clear_route_cache=off first. The route keys are validated like Envoy's oneof.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Gateway } from "../../host-test/gateway/server.js";
import { ResponseFlag } from "../../host-test/abi/constants.js";
import { startUpstream, waitFor, type Upstream } from "../helpers/upstreams.js";
import { buildGuest } from "../host/guests/build.js";
import { gatewayConfig, lastStream, messages, request } from "./gateway-helpers.js";

const A = "outbound|80||svc-a.static";
const B = "outbound|80||svc-b.static";
const C = "outbound|80||svc-c.static";
let ups: Upstream[] = [];
let gw: Gateway;

function upstreamOf(body: string): string { return (JSON.parse(body) as { upstream: string }).upstream; }

/** The scripted guest's on_log line of the last stream ("log ctx=N code=.. flags=.. details=.."). */
async function lastLogLine(): Promise<string> {
  const ref = lastStream(gw);
  const find = () => messages(gw, ref.vm).find((m) => m.startsWith(`log ctx=${ref.ctx} `)) ?? "";
  await waitFor(() => find() !== "", 2000, "on_log");
  return find();
}

beforeAll(async () => {
  const wasm = await buildGuest("scripted-100");
  ups = await Promise.all([startUpstream(), startUpstream(), startUpstream()]);
  gw = await startGateway(gatewayConfig({
    clusters: [A, B, C].map((name, i) => ({ name, endpoints: [ups[i].address] })),
    routes: [
      { name: "by-header-404", match: { prefix: "/strict" }, cluster_header: "X-Target-Cluster", cluster_not_found_response_code: 404 },
      { name: "no-filter", match: { prefix: "/plain" }, cluster_header: "x-target-cluster", plugin: false },
      { name: "by-header", match: { prefix: "/" }, cluster_header: "x-target-cluster" },
    ],
    plugin: { wasm, configuration: {} },
  }));
});

afterAll(async () => {
  await gw?.close();
  await Promise.all(ups.map((u) => u.close()));
});

describe("cluster_header route action", () => {
  it("sends each request to the cluster named by the header", async () => {
    for (const [name, i] of [[A, 0], [B, 1], [C, 2], [A, 0]] as const) {
      const r = await request(gw.url, { path: "/v1/chat", headers: { "x-target-cluster": name } });
      expect(r.status).toBe(200);
      expect(upstreamOf(r.body)).toBe(ups[i].address);
    }
  });

  it("without the header or with an unknown name: 503, empty body, flag NC (the route's code when set)", async () => {
    const missing = await request(gw.url, { path: "/v1/chat" });
    expect(missing.status).toBe(503);
    expect(missing.body).toBe("");
    expect(await lastLogLine()).toContain(`code=503 flags=${ResponseFlag.NC} details=cluster_not_found`);
    const unknown = await request(gw.url, { path: "/v1/chat", headers: { "x-target-cluster": "outbound|80||nope" } });
    expect(unknown.status).toBe(503);
    const strict = await request(gw.url, { path: "/strict", headers: { "x-target-cluster": "nope" } });
    expect(strict.status).toBe(404);
    expect(await lastLogLine()).toContain(`code=404 flags=${ResponseFlag.NC} details=cluster_not_found`);
    const plain = await request(gw.url, { path: "/plain" });
    expect(plain.status).toBe(503);
    expect(ups.reduce((n, u) => n + u.requests.filter((q) => q.path === "/strict").length, 0)).toBe(0);
  });

  it("a filter writing the header in on_request_headers re-routes the request", async () => {
    const r = await request(gw.url, { path: "/v1/chat", headers: { "x-target-cluster": A, "x-set-header": `x-target-cluster=${C}` } });
    // The guest adds a second value; Envoy reads only the first, so the client's A still wins ...
    expect(upstreamOf(r.body)).toBe(ups[0].address);
    // ... and with no client value the filter's value routes.
    const routed = await request(gw.url, { path: "/v1/chat", headers: { "x-set-header": `x-target-cluster=${B}` } });
    expect(routed.status).toBe(200);
    expect(upstreamOf(routed.body)).toBe(ups[1].address);
  });

  it("with clear_route_cache=off the header is written but the cached route (no cluster) stays", async () => {
    const r = await request(gw.url, { path: "/v1/chat", headers: { "x-route-cache-off": "1", "x-set-header": `x-target-cluster=${B}` } });
    expect(r.status).toBe(503);
  });
});

describe("cluster_header route keys", () => {
  const cluster = { name: A, endpoints: ["127.0.0.1:1"] };
  it("needs exactly one of cluster and cluster_header, a header name, a known not-found code", () => {
    expect(() => gatewayConfig({ clusters: [cluster], routes: [{ cluster: A, cluster_header: "x-c" }] }))
      .toThrow("routes[0]: expected exactly one of cluster and cluster_header");
    expect(() => gatewayConfig({ clusters: [cluster], routes: [{ match: { prefix: "/" } }] }))
      .toThrow("routes[0].cluster: expected a string");
    expect(() => gatewayConfig({ clusters: [cluster], routes: [{ cluster_header: "bad header" }] }))
      .toThrow("routes[0].cluster_header: expected an HTTP header name");
    expect(() => gatewayConfig({ clusters: [cluster], routes: [{ cluster_header: "x-c", cluster_not_found_response_code: 502 }] }))
      .toThrow("routes[0].cluster_not_found_response_code: expected one of 503 | 404 | 500");
    const ok = gatewayConfig({ clusters: [cluster], routes: [{ cluster_header: "X-C" }] });
    expect(ok.routes[0]).toMatchObject({ cluster: "", cluster_header: "x-c", cluster_not_found_response_code: 503 });
  });
});
