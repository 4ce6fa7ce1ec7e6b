// Audit rows 1 and 5 (host-test/README.md fidelity table): Higress's 32 KiB downstream buffer
// limit, raised per stream by the `set_decoder_buffer_limit` property, and the two body views
// (Envoy >= 1.32 includes the current chunk in the buffered body; 1.27, Higress 2.1.x, does not).
import { beforeAll, describe, expect, it } from "vitest";
import { DataAction, TestHost } from "../../host-test/facade/index.js";
import { buildGuest } from "./guests/build.js";

let g: string;
beforeAll(async () => { g = await buildGuest("scripted-100"); });
const clusters = { "outbound|8000||vllm.static": [{ address: "10.0.0.1:8000" }] };
const bodyLogs = (h: TestHost) => h.logMessages().filter((m) => m.startsWith("request_body")).map((m) => m.replace(/ ctx=\d+/, ""));
const KiB = 1024;

function bufferedPost(h: TestHost, extra: Record<string, string> = {}) {
  return h.stream({ method: "POST", headers: { "x-headers-action": "stop", "x-body-action": "buffer-until-end", ...extra } });
}

describe("decoder buffer limit (Higress per_connection_buffer_limit_bytes)", () => {
  it("by default a buffered body past 32 KiB is answered 413 by the host and never forwarded", async () => {
    const h = await TestHost.create({ wasm: g, clusters });
    const s = bufferedPost(h);
    s.sendRequestHeaders(false);
    expect(s.sendRequestBody(Buffer.alloc(32 * KiB, "a"), false)).toBe(DataAction.StopIterationAndBuffer);
    expect(s.localResponse).toBeNull();
    s.sendRequestBody("b", false);
    expect(s.localResponse?.status).toBe(413);
    expect(s.localResponse?.byHost).toBe(true);
    expect(s.response.status).toBe(413);
    expect(s.forwarded).toBeNull();
  });

  it("set_decoder_buffer_limit (decimal text) raises the limit for that stream only", async () => {
    const h = await TestHost.create({ wasm: g, clusters });
    const raised = bufferedPost(h, { "x-buffer-limit": String(128 * KiB) });
    raised.sendRequestHeaders(false);
    expect(h.logMessages()).toContain("set buffer limit status=0");
    raised.sendRequestBody(Buffer.alloc(60 * KiB, "a"), false);
    raised.sendRequestBody(Buffer.alloc(40 * KiB, "b"), true);
    expect(raised.localResponse).toBeNull();
    expect(raised.forwarded?.body.length).toBe(100 * KiB);

    const other = bufferedPost(h);
    other.sendRequestHeaders(false);
    other.sendRequestBody(Buffer.alloc(40 * KiB, "a"), false);
    expect(other.localResponse?.status).toBe(413);
  });

  it("past the raised limit the 413 still comes; a value that is not a number changes nothing", async () => {
    const h = await TestHost.create({ wasm: g, clusters });
    const small = bufferedPost(h, { "x-buffer-limit": "40000" });
    small.sendRequestHeaders(false);
    small.sendRequestBody(Buffer.alloc(40_001, "a"), false);
    expect(small.localResponse?.status).toBe(413);
    const junk = bufferedPost(h, { "x-buffer-limit": "lots" });
    junk.sendRequestHeaders(false);
    junk.sendRequestBody(Buffer.alloc(33 * KiB, "a"), false);
    expect(junk.localResponse?.status).toBe(413);
  });
});

describe("back pressure: Watermark statuses past the limit", () => {
  const lookup = { ...clusters, lookup: [{ address: "10.0.0.9:80" }] };

  it("the downstream is not read until the held data is released; then the rest arrives", async () => {
    const h = await TestHost.create({ wasm: g, clusters: lookup, configuration: "http=lookup", bufferLimitBytes: 8 });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "http", "x-body-action": "watermark-until-end" } });
    s.sendRequestHeaders(false);
    expect(s.sendRequestBody("0123456789", false)).toBe(DataAction.StopIterationAndWatermark);
    expect(s.stream.request.readDisabled).toBe(true);
    s.sendRequestBody("xyz", true);
    expect(bodyLogs(h)).toEqual(["request_body size=10 eos=0 body=0123456789"]);
    expect(s.localResponse).toBeNull();
    h.httpCalls[0].respond({ status: 200 });
    expect(bodyLogs(h)).toEqual(["request_body size=10 eos=0 body=0123456789", "request_body size=3 eos=1 body=xyz"]);
    expect(s.forwarded?.body.toString()).toBe("0123456789xyz");
    expect(s.forwarded?.ended).toBe(true);
  });

  it("under the limit nothing waits", async () => {
    const h = await TestHost.create({ wasm: g, clusters: lookup, configuration: "http=lookup", bufferLimitBytes: 64 });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "http", "x-body-action": "watermark-until-end" } });
    s.sendRequestHeaders(false);
    s.sendRequestBody("0123456789", false);
    s.sendRequestBody("xyz", true);
    expect(bodyLogs(h)).toHaveLength(2);
  });
});

describe("body view in the data callback while the filter buffers", () => {
  it("Envoy >= 1.32 (default): the buffered body includes the current chunk", async () => {
    const h = await TestHost.create({ wasm: g, clusters });
    const s = bufferedPost(h);
    s.sendRequestHeaders(false);
    s.sendRequestBody("ab", false);
    s.sendRequestBody("cd", true);
    expect(bodyLogs(h)).toEqual(["request_body size=2 eos=0 body=ab", "request_body size=4 eos=1 body=abcd"]);
    expect(s.forwarded?.body.toString()).toBe("abcd");
  });

  it("Envoy 1.27 (pre-1.32): the last chunk is missing from the view, yet still forwarded", async () => {
    const h = await TestHost.create({ wasm: g, clusters, profile: { bodyView: "pre-1.32" } });
    const s = bufferedPost(h);
    s.sendRequestHeaders(false);
    s.sendRequestBody("ab", false);
    s.sendRequestBody("cd", false);
    s.sendRequestBody("ef", true);
    expect(bodyLogs(h)).toEqual([
      "request_body size=2 eos=0 body=ab",
      "request_body size=2 eos=0 body=ab",
      "request_body size=4 eos=1 body=abcd",
    ]);
    expect(s.forwarded?.body.toString()).toBe("abcdef");
  });
});

describe("one buffer limit per stream (Envoy FilterManager::buffer_limit_)", () => {
  it("set_encoder_buffer_limit also lowers the request's limit: a request body past it is 413", async () => {
    const h = await TestHost.create({ wasm: g, clusters });
    const s = bufferedPost(h, { "x-encoder-buffer-limit": "1000" });
    s.sendRequestHeaders(false);
    expect(h.logMessages()).toContain("set encoder buffer limit status=0");
    s.sendRequestBody(Buffer.alloc(1001, "a"), false);
    expect(s.localResponse?.status).toBe(413);
  });

  it("set_decoder_buffer_limit also raises the response's limit: a buffered 40 KiB response is no 500", async () => {
    const h = await TestHost.create({ wasm: g, clusters });
    const s = h.stream({ method: "GET", headers: { "x-buffer-limit": String(128 * KiB), "x-resp-action": "buffer" } });
    s.sendRequestHeaders(true);
    s.sendResponseHeaders({ ":status": "200" }, false);
    s.sendResponseBody(Buffer.alloc(40 * KiB, "r"), false);
    s.sendResponseBody("end", true);
    expect(s.localResponse).toBeNull();
    expect(s.response.status).toBe(200);
    expect(s.response.body.length).toBe(40 * KiB + 3);
  });
});

describe("proxy_get_buffer_bytes bounds (cpp-host src/exports.cc get_buffer_bytes)", () => {
  it("nothing to copy (start at or past the end, or length 0) is Ok with pointer 0 and size 0 written", async () => {
    const h = await TestHost.create({ wasm: g, clusters });
    const s = h.stream({ method: "POST", headers: { "x-body-action": "probe-bounds" } });
    s.sendRequestHeaders(false);
    s.sendRequestBody("abcd", true);
    expect(h.logMessages().filter((m) => m.startsWith("probe"))).toEqual([
      "probe start=4 len=10 status=0 ptr=0 size=0",
      "probe start=9 len=10 status=0 ptr=0 size=0",
      "probe start=0 len=0 status=0 ptr=0 size=0",
    ]);
  });
});
