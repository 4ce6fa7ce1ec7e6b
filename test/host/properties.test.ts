// Properties (Envoy attributes; higress-abi.md "Standard Proxy-Wasm calls") and Higress's
// clear_route_cache behaviour: header changes re-match the route unless the property is "off".
import { beforeAll, describe, expect, it } from "vitest";
import { TestHost } from "../../host-test/facade/index.js";
import { buildGuest } from "./guests/build.js";

let g: string;
beforeAll(async () => { g = await buildGuest("scripted-100"); });
const C = "outbound|8000||vllm.static";

describe("properties", () => {
  it("stream and plugin properties, NotFound for unknown ones", async () => {
    const h = await TestHost.create({ wasm: g, rootId: "lb-root", pluginName: "llm-lb", clusters: { [C]: [{ address: "10.0.0.1:8000" }] } });
    const names = ["route_name", "cluster_name", "request.path", "request.url_path", "request.method", "request.host",
      "request.id", "request.headers.x-request-id", "plugin_root_id", "plugin_name", "node.id", "source.address",
      "upstream.address", "no.such.property"];
    h.stream({ route: "chat", path: "/v1/chat?x=1", authority: "api.test", method: "POST",
      headers: { "x-request-id": "rid-1", "x-log-props": names.join(",") } }).sendRequestHeaders(true);
    const props = Object.fromEntries(h.logMessages().filter((m) => m.startsWith("prop ")).map((m) => m.slice(5).split(/=(.*)/s).slice(0, 2)));
    expect(props).toEqual({
      route_name: "chat", cluster_name: C, "request.path": "/v1/chat?x=1", "request.url_path": "/v1/chat",
      "request.method": "POST", "request.host": "api.test", "request.id": "rid-1", "request.headers.x-request-id": "rid-1",
      plugin_root_id: "lb-root", plugin_name: "llm-lb", "node.id": "host-test", "source.address": "127.0.0.1:50000",
      // not chosen yet while request headers are processed
      "upstream.address": "status:1", "no.such.property": "status:1",
    });
  });

  it("request.time is int64 nanoseconds; response.code appears with the response", async () => {
    const h = await TestHost.create({ wasm: g, startTimeMs: 1_700_000_000_123, clusters: { [C]: [{ address: "10.0.0.1:8000" }] } });
    const s = h.stream();
    s.sendRequestHeaders(true);
    expect(s.property("request.time")!.readBigInt64LE(0)).toBe(1_700_000_000_123_000_000n);
    expect(s.property("response.code")).toBeNull();
    s.sendResponseHeaders({ ":status": "201" }, true);
    expect(s.property("response.code")!.readBigInt64LE(0)).toBe(201n);
  });
});

describe("clear_route_cache", () => {
  const routes = [
    { name: "r-pinned", cluster: "outbound|8000||pinned", header: ["x-pick", "a"] as [string, string] },
    { name: "r-default", cluster: C },
  ];
  const clusters = { [C]: [{ address: "10.0.0.1:8000" }], "outbound|8000||pinned": [{ address: "10.0.0.7:8000" }] };

  it("a request header change re-matches the route (Higress default)", async () => {
    const h = await TestHost.create({ wasm: g, routes, clusters });
    const s = h.stream({ route: "r-default", cluster: C, headers: { "x-set-header": "x-pick=a" } });
    s.sendRequestHeaders(true);
    expect(s.routeRecomputed).toBe(1);
    expect(s.route).toBe("r-pinned");
    expect(s.forwarded?.upstream.address).toBe("10.0.0.7:8000");
  });

  it("with clear_route_cache=off set first, the route stays", async () => {
    const h = await TestHost.create({ wasm: g, routes, clusters });
    const s = h.stream({ route: "r-default", cluster: C, headers: { "x-route-cache-off": "1", "x-set-header": "x-pick=a" } });
    s.sendRequestHeaders(true);
    expect(s.properties.clear_route_cache).toBe("off");
    expect(s.routeRecomputed).toBe(0);
    expect(s.route).toBe("r-default");
    expect(s.forwarded?.upstream.address).toBe("10.0.0.1:8000");
  });
});
