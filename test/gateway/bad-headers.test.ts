// A plugin that writes an invalid header must not take the gateway down. Envoy (see
// host-test/gateway/header-check.ts for the sources) refuses an invalid request header when the
// upstream codec encodes it: local 503 "invalid header ... : <key>", flag DPE, nothing reaches the
// upstream. An invalid response header is written as is by Envoy; the gateway resets the stream.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Gateway } from "../../host-test/gateway/server.js";
import { startUpstream, type Upstream } from "../helpers/upstreams.js";
import { buildGuest } from "../host/guests/build.js";
import { gatewayConfig, request } from "./gateway-helpers.js";

let up: Upstream;
let gw: Gateway;

beforeAll(async () => {
  const wasm = await buildGuest("scripted-100");
  up = await startUpstream();
  gw = await startGateway(gatewayConfig({
    clusters: [{ name: "echo", endpoints: [up.address] }],
    routes: [{ name: "r", match: { prefix: "/" }, cluster: "echo" }],
    plugin: { wasm, configuration: "{}" },
  }));
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

const ok = async () => expect((await request(gw.url, { path: "/ok" })).status).toBe(200);

describe("invalid headers written by the plugin", () => {
  it("a request header value with CR/LF: local 503 naming the key, the upstream sees nothing", async () => {
    const before = up.requests.length;
    const res = await request(gw.url, { path: "/a", headers: { "x-set-header": "x-bad=a%0D%0Ax-injected: 1" } });
    expect(res.status).toBe(503);
    expect(res.body).toBe("invalid header value for: x-bad");
    expect(up.requests.length).toBe(before);
    await ok();
  });

  it("a request header name with a space: local 503 naming it", async () => {
    const res = await request(gw.url, { path: "/b", headers: { "x-set-header": "x bad=1" } });
    expect(res.status).toBe(503);
    expect(res.body).toBe("invalid header name: x bad");
    await ok();
  });

  it("a response header value with LF: the stream is reset, the gateway keeps serving", async () => {
    const resets = gw.stats.endings.get("filter_reset") ?? 0;
    await expect(request(gw.url, { path: "/c", headers: { "x-set-resp-header": "x-bad=a%0Ab" } })).rejects.toThrow();
    expect(gw.stats.endings.get("filter_reset")).toBe(resets + 1);
    await ok();
  });
});
