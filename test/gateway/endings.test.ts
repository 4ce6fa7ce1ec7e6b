// Every way a stream can end through the gateway fires proxy_on_log/done/delete exactly once (in that order),
// with Envoy's answers and response flags (host-test/gateway/proxy-stream.ts cites them), and an
// SSE response reaches the client chunk by chunk.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Gateway } from "../../host-test/gateway/server.js";
import { freePort } from "../helpers/ports.js";
import { startUpstream, waitFor, type Upstream } from "../helpers/upstreams.js";
import { buildGuest } from "../host/guests/build.js";
import { endCallbacks, gatewayConfig, lastStream, messages, request, type StreamRef } from "./gateway-helpers.js";

let wasm: string;
let echo: Upstream, hang: Upstream, reset: Upstream, sse: Upstream, sick: Upstream;
let gw: Gateway;
let releaseSecondEvent: () => void = () => {};
let closedPort: number;

beforeAll(async () => {
  wasm = await buildGuest("scripted-100");
  echo = await startUpstream();
  hang = await startUpstream(() => { /* never answers */ });
  reset = await startUpstream((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.write("partial");
    setTimeout(() => res.socket?.destroy(), 20);
  });
  sse = await startUpstream((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: one\n\n");
    // The second event is only sent once the test has seen the first one at the client.
    releaseSecondEvent = () => res.end("data: two\n\n");
  });
  sick = await startUpstream((req, res) => { res.writeHead(req.url === "/metrics" ? 500 : 200).end("x"); });
  closedPort = await freePort();
  const cluster = (name: string, endpoints: string[], extra: Record<string, unknown> = {}) => ({ name, endpoints, connect_timeout_ms: 500, ...extra });
  gw = await startGateway(gatewayConfig({
    workers: 2,
    clusters: [
      cluster("echo", [echo.address]),
      cluster("hang", [hang.address]),
      cluster("reset", [reset.address]),
      cluster("sse", [sse.address]),
      cluster("down", [`127.0.0.1:${closedPort}`]),
      cluster("sick", [sick.address], { health_check: { path: "/metrics", interval_ms: 60000, timeout_ms: 500 } }),
    ],
    routes: [
      { name: "hang", match: { prefix: "/hang" }, cluster: "hang", timeout_ms: 150 },
      { name: "abort", match: { prefix: "/abort" }, cluster: "hang", timeout_ms: 0 },
      { name: "reset", match: { prefix: "/reset" }, cluster: "reset" },
      { name: "sse", match: { prefix: "/sse" }, cluster: "sse" },
      { name: "down", match: { prefix: "/down" }, cluster: "down" },
      { name: "sick", match: { prefix: "/sick" }, cluster: "sick" },
      { name: "echo", match: { prefix: "/" }, cluster: "echo" },
    ],
    plugin: { wasm, configuration: {} },
  }));
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([echo, hang, reset, sse, sick].map((u) => u?.close()));
});

async function endedOnce(kind: string, before: number): Promise<StreamRef> {
  await waitFor(() => (gw.stats.endings.get(kind) ?? 0) > before, 5000, `ending ${kind}`);
  const ref = lastStream(gw);
  expect(endCallbacks(gw, ref)).toEqual(["log", "done", "delete"]);
  return ref;
}
const logLine = (ref: StreamRef) => messages(gw, ref.vm).find((m) => m.startsWith(`log ctx=${ref.ctx} `)) ?? "";
const count = (kind: string) => gw.stats.endings.get(kind) ?? 0;

describe("gateway endings", () => {
  it("normal: proxied through the filter, log/done/delete once", async () => {
    const before = count("complete");
    const r = await request(gw.url, { method: "POST", path: "/v1/chat", body: "hello", headers: { "content-type": "text/plain" } });
    expect(r.status).toBe(200);
    expect(r.headers["x-filtered"]).toBe("1");
    const seen = JSON.parse(r.body);
    expect(seen).toMatchObject({ upstream: echo.address, method: "POST", path: "/v1/chat", body: "hello" });
    expect(seen.headers["x-request-id"]).toBeTruthy();
    expect(r.headers["x-gateway-upstream-host"]).toBeUndefined();
    await endedOnce("complete", before);
  });

  it("local reply from the filter", async () => {
    const before = count("local_reply");
    const r = await request(gw.url, { headers: { "x-headers-action": "local" } });
    expect(r.status).toBe(403);
    expect(r.body).toBe("denied");
    expect(echo.requests.every((q) => q.headers["x-headers-action"] !== "local")).toBe(true);
    await endedOnce("local_reply", before);
  });

  it("upstream connect failure: 503 with UF", async () => {
    const before = count("upstream_connect_failure");
    const r = await request(gw.url, { path: "/down" });
    expect(r.status).toBe(503);
    // Envoy 1.27's text (router.cc onUpstreamReset: reset reason, then the transport failure reason).
    expect(r.body).toBe("upstream connect error or disconnect/reset before headers. reset reason: remote connection failure, transport failure reason: delayed connect error: 111");
    const ref = await endedOnce("upstream_connect_failure", before);
    expect(logLine(ref)).toBe(`log ctx=${ref.ctx} code=503 flags=32 details=upstream_reset_before_response_started{remote_connection_failure,delayed_connect_error:_111} upstream=127.0.0.1:${closedPort}`);
  });

  it("route timeout: 504 upstream request timeout with UT", async () => {
    const before = count("timeout");
    const r = await request(gw.url, { path: "/hang" });
    expect(r.status).toBe(504);
    expect(r.body).toBe("upstream request timeout");
    const ref = await endedOnce("timeout", before);
    expect(logLine(ref)).toContain("code=504 flags=4 details=response_timeout");
  });

  it("no healthy upstream: 503 with UH", async () => {
    const before = count("no_healthy_upstream");
    const r = await request(gw.url, { path: "/sick" });
    expect(r.status).toBe(503);
    expect(r.body).toBe("no healthy upstream");
    await endedOnce("no_healthy_upstream", before);
  });

  it("upstream reset after response headers resets the client", async () => {
    const before = count("upstream_reset");
    await expect(request(gw.url, { path: "/reset" })).rejects.toThrow();
    const ref = await endedOnce("upstream_reset", before);
    expect(logLine(ref)).toContain("code=200 flags=16 ");
  });

  it("client abort while the upstream has not answered", async () => {
    const before = count("client_abort");
    const hangSeen = hang.requests.length;
    const req = http.request(new URL("/abort", gw.url), { agent: false });
    req.on("error", () => {});
    req.end();
    await waitFor(() => hang.requests.length > hangSeen, 5000, "request at upstream");
    req.destroy();
    const ref = await endedOnce("client_abort", before);
    expect(logLine(ref)).toContain("flags=16384");
  });

  it("SSE: the first event reaches the client before the upstream sends the second", async () => {
    const events: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      http.get(new URL("/sse", gw.url), { agent: false }, (res) => {
        expect(res.headers["content-type"]).toBe("text/event-stream");
        res.on("data", (c: Buffer) => {
          events.push(c.toString());
          if (events.length === 1) releaseSecondEvent();
        });
        res.on("end", () => resolve());
        res.on("error", reject);
      }).on("error", reject);
    });
    await done;
    expect(events.join("")).toBe("data: one\n\ndata: two\n\n");
    expect(events[0]).toBe("data: one\n\n");
  });

  it("admin: prometheus stats, readiness, clusters", async () => {
    const stats = await request(gw.adminUrl!, { path: "/stats/prometheus" });
    expect(stats.body).toMatch(/gateway_upstream_rq_total\{upstream="127\.0\.0\.1:\d+"\} \d+/);
    expect(stats.body).toMatch(/gateway_stream_end_total\{kind="complete"\} \d+/);
    expect(stats.body).toMatch(/^test_requests\{\} \d+$/m); // Envoy prints {} on a series without labels
    expect((await request(gw.adminUrl!, { path: "/ready" })).status).toBe(200);
    const clusters = JSON.parse((await request(gw.adminUrl!, { path: "/clusters" })).body);
    expect(clusters.clusters.find((c: { name: string }) => c.name === "sick").hosts[0].health).toBe("Unhealthy");
  });
});
