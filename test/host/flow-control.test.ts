// Stream flow control as Envoy runs it for a Proxy-Wasm filter (sources in
// host-test/abi/stream-flow.ts): header/data statuses, buffering, continue, local replies, and
// the ABI-version difference of StopIteration (higress-abi.md "ABI version export").
import { beforeAll, describe, expect, it } from "vitest";
import { HeadersAction, DataAction, TestHost } from "../../host-test/facade/index.js";
import { buildGuest } from "./guests/build.js";

let g100: string, g020: string;
beforeAll(async () => { [g100, g020] = await Promise.all([buildGuest("scripted-100"), buildGuest("scripted-020")]); });

const clusters = { "outbound|8000||vllm.static": [{ address: "10.0.0.1:8000" }] };
const bodyLogs = (h: TestHost) => h.logMessages().filter((m) => m.startsWith("request_body"));

describe("StopIteration from request headers: 0_2_100 vs 0_2_0", () => {
  it("0_2_100 holds headers while body callbacks keep arriving (whole buffered body each time)", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "stop", "x-body-action": "buffer-until-end" } });
    expect(s.sendRequestHeaders(false)).toBe(HeadersAction.StopIteration);
    expect(s.sendRequestBody("ab", false)).toBe(DataAction.StopIterationAndBuffer);
    expect(s.forwarded).toBeNull();
    expect(s.sendRequestBody("cd", true)).toBe(DataAction.Continue);
    expect(bodyLogs(h)).toEqual([
      "request_body ctx=2 size=2 eos=0 body=ab",
      "request_body ctx=2 size=4 eos=1 body=abcd",
    ]);
    expect(s.forwarded?.body.toString()).toBe("abcd");
    expect(s.forwarded?.ended).toBe(true);
  });

  it("0_2_0 turns StopIteration into StopAllIterationAndWatermark: the filter sees no body chunk", async () => {
    const h = await TestHost.create({ wasm: g020, clusters });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "stop", "x-body-action": "buffer-until-end" } });
    expect(s.sendRequestHeaders(false)).toBe(HeadersAction.StopAllIterationAndWatermark);
    expect(s.sendRequestBody("ab", false)).toBeNull();
    expect(s.sendRequestBody("cd", true)).toBeNull();
    expect(bodyLogs(h)).toEqual([]);
    expect(s.forwarded).toBeNull(); // nothing continues it: the stream would hang in Higress
  });

  it("0_2_0: after continue, headers go upstream first, then the filter sees the buffered body once", async () => {
    const h = await TestHost.create({ wasm: g020, configuration: "http=lookup", clusters: { ...clusters, lookup: [{ address: "10.0.0.9:80" }] } });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "http" } });
    s.sendRequestHeaders(false);
    s.sendRequestBody("ab", false);
    s.sendRequestBody("cd", true);
    expect(bodyLogs(h)).toEqual([]);
    h.httpCalls[0].respond({ status: 200, body: "ok" });
    expect(bodyLogs(h)).toEqual(["request_body ctx=2 size=4 eos=1 body=abcd"]);
    expect(s.forwarded?.body.toString()).toBe("abcd");
    expect(s.forwarded?.ended).toBe(true);
  });

  it("0_2_100: a body Continue releases held headers at once (the later continue is a no-op)", async () => {
    const h = await TestHost.create({ wasm: g100, configuration: "http=lookup", clusters: { ...clusters, lookup: [{ address: "10.0.0.9:80" }] } });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "http" } });
    s.sendRequestHeaders(false);
    expect(s.forwarded).toBeNull();
    s.sendRequestBody("ab", false);
    expect(s.forwarded?.body.toString()).toBe("ab");
    h.httpCalls[0].respond({ status: 200 });
    expect(s.stream.request.continuesIgnored).toBe(1);
  });

  it("0_2_100: a bodiless GET whose headers are held goes upstream when the guest continues", async () => {
    const h = await TestHost.create({ wasm: g100, configuration: "http=lookup", clusters: { ...clusters, lookup: [{ address: "10.0.0.9:80" }] } });
    const s = h.stream({ headers: { "x-headers-action": "http" } });
    expect(s.sendRequestHeaders(true)).toBe(HeadersAction.StopIteration);
    expect(s.forwarded).toBeNull();
    h.httpCalls[0].respond({ status: 200 });
    expect(s.forwarded?.ended).toBe(true);
    expect(s.forwarded?.body.length).toBe(0);
  });

  it("StopAllIterationAndBuffer under 0_2_100 also hides body chunks until continue", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "stopall-buffer" } });
    expect(s.sendRequestHeaders(false)).toBe(HeadersAction.StopAllIterationAndBuffer);
    expect(s.sendRequestBody("xy", true)).toBeNull();
    expect(bodyLogs(h)).toEqual([]);
  });
});

describe("data statuses", () => {
  it("StopIterationAndWatermark keeps data but the next callback sees only its own chunk", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ method: "POST", headers: { "x-body-action": "watermark" } });
    s.sendRequestHeaders(false);
    expect(s.forwarded?.body.length).toBe(0); // headers continued
    s.sendRequestBody("ab", false);
    s.sendRequestBody("cd", false);
    expect(bodyLogs(h)).toEqual(["request_body ctx=2 size=2 eos=0 body=ab", "request_body ctx=2 size=2 eos=0 body=cd"]);
    expect(s.stream.request.buffered.toString()).toBe("abcd");
    expect(s.forwarded?.body.length).toBe(0);
  });

  it("StopIterationNoBuffer drops the chunk", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ method: "POST", headers: { "x-body-action": "nobuffer" } });
    s.sendRequestHeaders(false);
    s.sendRequestBody("ab", false);
    expect(s.stream.request.buffered.length).toBe(0);
    expect(s.forwarded?.body.length).toBe(0);
  });

  it("proxy_set_buffer_bytes(start 0, length size) replaces the body that goes upstream", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "stop", "x-body-action": "rewrite-at-end" } });
    s.sendRequestHeaders(false);
    s.sendRequestBody("original", false);
    s.sendRequestBody("-body", true);
    expect(h.logMessages()).toContain("set_buffer status=0");
    expect(s.forwarded?.body.toString()).toBe("REWRITTEN");
  });

  it("buffering over the buffer limit answers 413 (Envoy decoder buffer limit)", async () => {
    const h = await TestHost.create({ wasm: g100, clusters, bufferLimitBytes: 8 });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "stop", "x-body-action": "buffer" } });
    s.sendRequestHeaders(false);
    s.sendRequestBody("0123456789", false);
    expect(s.localResponse?.status).toBe(413);
    expect(s.localResponse?.byHost).toBe(true);
    expect(s.forwarded).toBeNull();
  });
});

describe("continue and local replies", () => {
  it("continue called inside the headers callback takes effect after the callback (deferred)", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ headers: { "x-headers-action": "continue-inline" } });
    expect(s.sendRequestHeaders(true)).toBe(HeadersAction.StopIteration);
    expect(h.logMessages()).toContain("continue status=0");
    expect(s.forwarded?.ended).toBe(true);
  });

  it("headers modified by the filter are the headers that go upstream", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ headers: { "x-set-header": "x-added=yes", "x-route-cache-off": "1" } });
    s.sendRequestHeaders(true);
    expect(s.forwarded?.headers["x-added"]).toBe("yes");
  });

  it("request headers are neither writable nor readable once forwarded (BadArgument), and readable again in on_log (the access log's maps)", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream();
    s.sendRequestHeaders(true);
    s.sendResponseHeaders({ ":status": "200" }, true);
    expect(h.logMessages()).toContain("late request header status=2");
    expect(h.logMessages()).toContain("late request header read status=2");
    s.complete();
    expect(h.logMessages()).toContain("log request header read status=0 response=0");
  });

  it("send_local_response stops iteration, skips upstream, and runs the filter's response callbacks", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ headers: { "x-headers-action": "local-then-continue" } });
    // The guest returned Continue, but a local reply during the callback forces StopAll (cpp-host).
    expect(s.sendRequestHeaders(true)).toBe(HeadersAction.StopAllIterationAndWatermark);
    expect(s.forwarded).toBeNull();
    expect(s.localResponse).toMatchObject({ status: 403, details: "test_403", byHost: false });
    expect(s.response.status).toBe(403);
    expect(s.response.headers).toMatchObject({ "x-local": "yes", "x-filtered": "1", "content-type": "text/plain", "content-length": "6" });
    expect(s.response.body.toString()).toBe("denied");
    expect(h.logMessages()).toContain("response_headers ctx=2 status=403 eos=0");
  });

  it("a local reply after buffering the request body replaces the upstream exchange", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "stop", "x-body-action": "local-at-end" } });
    s.sendRequestHeaders(false);
    s.sendRequestBody("abc", false);
    expect(s.sendRequestBody("def", true)).toBe(DataAction.StopIterationNoBuffer);
    expect(s.forwarded).toBeNull();
    expect(s.response.status).toBe(413);
  });
});

describe("response path", () => {
  it("chunks pass as they arrive when the filter returns Continue (no buffering: SSE)", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream();
    s.sendRequestHeaders(true);
    s.sendResponseHeaders({ ":status": "200", "content-type": "text/event-stream" }, false);
    s.sendResponseBody("data: 1\n\n", false);
    expect(s.response.chunks.map(String)).toEqual(["data: 1\n\n"]);
    s.sendResponseBody("data: 2\n\n", true);
    expect(s.response.chunks.map(String)).toEqual(["data: 1\n\n", "data: 2\n\n"]);
    expect(s.response.headers["x-filtered"]).toBe("1");
  });

  it("StopIterationAndBuffer on the response holds chunks until end of stream", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ headers: { "x-resp-action": "buffer" } });
    s.sendRequestHeaders(true);
    s.sendResponseHeaders({ ":status": "200" }, false);
    s.sendResponseBody("a", false);
    s.sendResponseBody("b", false);
    expect(s.response.chunks.length).toBe(0);
    s.sendResponseBody("c", true);
    expect(s.response.chunks.map(String)).toEqual(["abc"]);
  });

  it("held response headers are released by continue_stream(Response)", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ headers: { "x-resp-action": "stop" } });
    s.sendRequestHeaders(true);
    expect(s.sendResponseHeaders({ ":status": "200" }, false)).toBe(HeadersAction.StopIteration);
    expect(s.response.status).toBeNull();
    s.sendResponseBody("z", true);
    expect(s.response.status).toBe(200);
    expect(s.response.body.toString()).toBe("z");
  });
});

describe("header map writes (Envoy HeaderMapImpl, higress-group/envoy envoy-1.27 header_map_impl.cc)", () => {
  it("replace drops every value of the key and adds the new one last (setCopy: remove, then addCopy)", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ headers: [["x-dup", "a"], ["x-mid", "m"], ["x-dup", "b"], ["x-replace-header", "x-dup=c"]] });
    s.sendRequestHeaders(true);
    expect(h.logMessages()).toContain("replace header status=0");
    const list = s.forwarded!.headerList;
    expect(list.filter(([k]) => k === "x-dup")).toEqual([["x-dup", "c"]]);
    expect(list[list.length - 1]).toEqual(["x-dup", "c"]);
  });

  it("a pseudo-header written by the filter stays among the pseudo-headers, before the others (HeaderList::insert)", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ headers: { "x-replace-header": ":path=/v2" } });
    s.sendRequestHeaders(true);
    const keys = s.forwarded!.headerList.map(([k]) => k);
    expect(keys.slice(0, 4).sort()).toEqual([":authority", ":method", ":path", ":scheme"]);
    expect(s.forwarded!.headers[":path"]).toBe("/v2");
  });
});

describe("statuses of calls on what a stream does not have (envoy context.cc, cpp-host exports.cc)", () => {
  it("Downstream / Upstream stream types, http-call map size, response headers not there yet", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ headers: { "x-status-probe": "1" } });
    s.sendRequestHeaders(true);
    // continueStream: Downstream Ok, Upstream Unimplemented; closeStream: Ok for both (no network
    // callbacks: nothing happens); getHeaderMapSize uses getMap (no http-call maps): BadArgument;
    // a map not there is BadArgument outside the access log; getHeaderMapPairs is always Ok (0 / 0).
    expect(h.logMessages()).toContain("probe continue2=0 continue3=12 close2=0 close3=0 size6=2 resp_get=2 resp_pairs=0 ptr=0 len=0");
    expect(s.resetReason).toBeNull();
    expect(s.forwarded).not.toBeNull();
    s.sendResponseHeaders({ ":status": "200" }, true);
    s.complete();
    // on_log: the size reads the stream's own pointer (getMap), gone once headers were continued.
    expect(h.logMessages()).toContain("log size request=2");
  });

  it("on a root context continue_stream(Upstream) is Unimplemented and the http-call map size BadArgument", async () => {
    const h = await TestHost.create({ wasm: g100, configuration: "http=lookup", clusters: { ...clusters, lookup: [{ address: "10.0.0.9:80" }] } });
    const s = h.stream({ headers: { "x-headers-action": "http" } });
    s.sendRequestHeaders(true);
    h.httpCalls[0].respond({ status: 200, body: "ok" });
    expect(h.logMessages()).toContain("root continue3=12 size6=2");
  });
});
