// proxy_http_call answers that Envoy's AsyncClient turns into failures, through the facade's real
// HTTP mode against raw TCP servers (each response written byte for byte). Sources (higress-group/
// envoy envoy-1.27): source/common/http/async_client_impl.h AsyncStreamImpl::sendLocalReply (once
// response headers were passed on, a local reply is a reset), async_client_impl.cc
// AsyncRequestSharedImpl::onData / onReset (a body over `http.async_response_buffer_limit`, 32 MiB
// by default, is ExceedResponseBufferLimit), extensions/common/wasm/context.cc onHttpCallFailure
// (any failure reaches the guest as 0 headers, 0 body, 0 trailers), http1/codec_impl.cc
// completeCurrentHeader / checkMaxHeadersSize (upstream limits: 100 headers, 80 KiB) and
// router.cc onUpstreamReset (a protocol error is a 502 local reply, reset reason "protocol error").
import net from "node:net";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { TestHost } from "../../host-test/facade/index.js";
import type { HttpCalloutResponse } from "../../host-test/abi/backend.js";
import { ASYNC_RESPONSE_BUFFER_LIMIT, sendHttpCallout } from "../../host-test/gateway/http-callout.js";
import { buildGuest } from "./guests/build.js";

let g: string;
beforeAll(async () => { g = await buildGuest("scripted-100"); });

const servers: net.Server[] = [];
afterEach(() => { for (const s of servers.splice(0)) s.close(); });

/** A server that answers each request with `write(socket)` (raw bytes; it may leave the socket open). */
async function rawServer(write: (socket: net.Socket) => void): Promise<string> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    socket.once("data", () => write(socket));
  });
  const close = server.close.bind(server);
  server.close = ((cb?: (err?: Error) => void) => { for (const s of sockets) s.destroy(); return close(cb); }) as typeof server.close;
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

/** Runs the scripted guest's http_call (timeout 1000 ms) against `address`; its response log line. */
async function callOnce(address: string): Promise<string> {
  const h = await TestHost.create({ wasm: g, configuration: "http=lookup", http: "real",
    clusters: { c: [{ address: "10.0.0.1:8000" }], lookup: [{ address }] } });
  try {
    h.stream({ headers: { "x-headers-action": "http" } }).sendRequestHeaders(true);
    await h.calloutsIdle();
    const line = h.logMessages().find((m) => m.startsWith("http_response"));
    expect(line).toBeDefined();
    return line!;
  } finally { h.close(); }
}

describe("http_call failures as Envoy's AsyncClient reports them", () => {
  it("the timeout after the response headers arrived is a reset: 0 headers, not the 504 local reply", async () => {
    const address = await rawServer((s) => s.write("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nabc")); // then stalls
    expect(await callOnce(address)).toMatch(/ headers=0 status= body=$/);
  });

  // Straight through the emulator's exchange, with a timeout far away: through the guest (its
  // call's timeout is 1 s), a slow transfer of 32 MiB would end as a timeout, not as the limit.
  it("a body over 32 MiB (http.async_response_buffer_limit) is a failure (null: 0 headers); 32 MiB passes", async () => {
    const sized = (n: number) => rawServer((s) => {
      s.write(`HTTP/1.1 200 OK\r\ncontent-length: ${n}\r\n\r\n`);
      s.end(Buffer.alloc(n, 0x61));
    });
    const exchange = (address: string) => new Promise<HttpCalloutResponse | null>((resolve) => sendHttpCallout(address,
      { vm: 0, cluster: "lookup", headers: [[":method", "GET"], [":path", "/"], [":authority", "x"]], body: Buffer.alloc(0), trailers: [], timeoutMs: 60_000 },
      undefined, resolve));
    expect(ASYNC_RESPONSE_BUFFER_LIMIT).toBe(32 * 1024 * 1024);
    expect(await exchange(await sized(ASYNC_RESPONSE_BUFFER_LIMIT + 1))).toBeNull();
    const atLimit = await exchange(await sized(ASYNC_RESPONSE_BUFFER_LIMIT));
    expect(atLimit?.headers[0]).toEqual([":status", "200"]);
    expect(atLimit?.body.length).toBe(ASYNC_RESPONSE_BUFFER_LIMIT);
  }, 60_000);

  const withHeaders = (lines: string[]) => rawServer((s) => s.end(`HTTP/1.1 200 OK\r\n${lines.map((l) => l + "\r\n").join("")}content-length: 2\r\n\r\nok`));
  const protocolError = / headers=3 status=502 body=upstream connect error or disconnect\/reset before headers. reset reason: protocol error$/;

  it("more than 100 response headers is the upstream codec's protocol error: the router's 502", async () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `x-h${i}: v`);
    expect(await callOnce(await withHeaders(many(99)))).toMatch(/ status=200 body=ok$/); // + content-length: 100
    expect(await callOnce(await withHeaders(many(100)))).toMatch(protocolError);
  });

  it("response headers over 80 KiB are a protocol error (502); 70 KiB pass (Node's own default stops at 16 KiB)", async () => {
    expect(await callOnce(await withHeaders([`x-big: ${"v".repeat(70 * 1024)}`]))).toMatch(/ status=200 body=ok$/);
    expect(await callOnce(await withHeaders([`x-big: ${"v".repeat(81 * 1024)}`]))).toMatch(protocolError);
  });

  it("the timeout before any response header is the router's 504 local reply", async () => {
    const address = await rawServer(() => {}); // never answers
    expect(await callOnce(address)).toMatch(/ headers=3 status=504 body=upstream request timeout$/);
  });
});

describe("recorded http_call answers keep the same limits", () => {
  const recorded = async () => {
    const h = await TestHost.create({ wasm: g, configuration: "http=lookup", clusters: { c: [{ address: "10.0.0.1:8000" }], lookup: [{ address: "10.0.0.9:80" }] } });
    h.stream({ headers: { "x-headers-action": "http" } }).sendRequestHeaders(true);
    return h;
  };
  const answer = async (a: Parameters<TestHost["httpCalls"][number]["respond"]>[0]) => {
    const h = await recorded();
    try {
      h.httpCalls[0].respond(a);
      return h.logMessages().find((m) => m.startsWith("http_response"))!;
    } finally { h.close(); }
  };
  const headers = (n: number, size = 1) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, "v".repeat(size)]));

  it("more than 100 headers, or more than 80 KiB of them, is the router's 502; 100 and 80 KiB pass", async () => {
    expect(await answer({ status: 200, headers: headers(100), body: "ok" })).toMatch(/ status=200 body=ok$/);
    expect(await answer({ status: 200, headers: headers(101), body: "ok" })).toMatch(/ headers=3 status=502 body=.*reset reason: protocol error$/);
    // Envoy counts each header's name and value: 2 x (4 + 40956) = 81920 bytes is the limit.
    expect(await answer({ status: 200, headers: { "x-h0": "v".repeat(40956), "x-h1": "v".repeat(40956) }, body: "ok" })).toMatch(/ status=200 body=ok$/);
    expect(await answer({ status: 200, headers: { "x-h0": "v".repeat(40956), "x-h1": "v".repeat(40957) }, body: "ok" })).toMatch(/ status=502 /);
  });

  it("a body over 32 MiB is a failure: 0 headers", async () => {
    expect(await answer({ status: 200, body: Buffer.alloc(ASYNC_RESPONSE_BUFFER_LIMIT + 1, 0x61) })).toMatch(/ headers=0 status= body=$/);
  });
});
