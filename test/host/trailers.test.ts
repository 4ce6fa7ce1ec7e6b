// Request trailers (HTTP/2) as Envoy delivers them to a Proxy-Wasm filter (sources in
// host-test/abi/stream-flow.ts and host-test/README.md "request trailers"): after a last body
// chunk with end_stream false, even to a filter holding headers or data; Continue resumes a
// stopped filter, StopIteration holds until proxy_continue_stream; map 1 is the filter's while
// it has them.
import { beforeAll, describe, expect, it } from "vitest";
import { DataAction, HeadersAction, TestHost } from "../../host-test/facade/index.js";
import { buildGuest } from "./guests/build.js";

let g100: string, g020: string;
beforeAll(async () => { [g100, g020] = await Promise.all([buildGuest("scripted-100"), buildGuest("scripted-020")]); });

const clusters = { "outbound|8000||vllm.static": [{ address: "10.0.0.1:8000" }], lookup: [{ address: "10.0.0.9:80" }] };
const Continue = 0, StopIteration = 1;
const logs = (h: TestHost, prefix: string) => h.logMessages().filter((m) => m.startsWith(prefix));

describe("request trailers", () => {
  it("reach a filter that stopped in its data callback; Continue sends the held headers, body (not ended) and trailers", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "stop", "x-body-action": "watermark", "x-trailers-action": "continue" } });
    expect(s.sendRequestHeaders(false)).toBe(HeadersAction.StopIteration);
    expect(s.sendRequestBody("ab", false)).toBe(DataAction.StopIterationAndWatermark);
    expect(s.sendRequestTrailers({ "x-t": "1" })).toBe(Continue);
    expect(logs(h, "request_body")).toEqual(["request_body ctx=2 size=2 eos=0 body=ab"]);
    // The headers were held (StopIteration): Envoy still has their pointer; the trailers are writable.
    expect(logs(h, "request_trailers")).toEqual(["request_trailers ctx=2 n=1 trailers x-t=1"]);
    expect(h.logMessages()).toContain("trailers add status=0 headers read status=0");
    expect(s.forwarded?.body.toString()).toBe("ab");
    expect(s.forwarded?.trailers).toEqual({ "x-t": "1", "x-added": "yes" });
    expect(s.forwarded?.ended).toBe(true);
    // After Continue Envoy drops the trailers' pointer (BadArgument); the access log has none (NotFound).
    s.sendResponseHeaders({ ":status": "200" }, true);
    expect(h.logMessages()).toContain("response_headers trailers read status=2 add status=2");
    expect(h.logMessages()).toContain("log trailers read status=1 add status=2");
  });

  it("after a filter that let everything through, pass on after its Continue", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ method: "POST", headers: { "x-trailers-action": "continue" } });
    s.sendRequestHeaders(false);
    expect(s.sendRequestBody("ab", false)).toBe(DataAction.Continue);
    expect(s.forwarded?.body.toString()).toBe("ab");
    expect(s.forwarded?.ended).toBe(false);
    expect(s.sendRequestTrailers({ "x-t": "1" })).toBe(Continue);
    expect(s.forwarded?.trailers).toEqual({ "x-t": "1", "x-added": "yes" });
    expect(s.forwarded?.ended).toBe(true);
  });

  it("StopIteration holds headers, body and trailers until proxy_continue_stream; the map stays the filter's meanwhile", async () => {
    const h = await TestHost.create({ wasm: g100, configuration: "http=lookup", clusters });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "stop", "x-body-action": "watermark", "x-trailers-action": "http" } });
    s.sendRequestHeaders(false);
    s.sendRequestBody("ab", false);
    expect(s.sendRequestTrailers({ "x-t": "1" })).toBe(StopIteration);
    expect(s.forwarded).toBeNull();
    h.httpCalls[0].respond({ status: 200 });
    expect(h.logMessages()).toContain("http_response trailers read status=0 add status=0");
    expect(s.forwarded?.headers[":method"]).toBe("POST");
    expect(s.forwarded?.body.toString()).toBe("ab");
    expect(s.forwarded?.trailers).toEqual({ "x-t": "1", "x-added": "yes", "x-late": "1" });
    expect(s.forwarded?.ended).toBe(true);
  });

  it("a continue_stream inside on_request_trailers resumes after the call; the map is dropped at once", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "stop", "x-body-action": "watermark", "x-trailers-action": "continue-inline" } });
    s.sendRequestHeaders(false);
    s.sendRequestBody("ab", false);
    expect(s.sendRequestTrailers({ "x-t": "1" })).toBe(StopIteration);
    expect(h.logMessages()).toContain("continue status=0");
    expect(s.forwarded?.trailers).toEqual({ "x-t": "1", "x-added": "yes" });
    expect(s.forwarded?.ended).toBe(true);
  });

  it("an out-of-range status is StopIteration (cpp-host convertVmCallResultToFilterTrailersStatus)", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ method: "POST", headers: { "x-trailers-action": "bad-status" } });
    s.sendRequestHeaders(false);
    s.sendRequestBody("ab", false);
    expect(s.sendRequestTrailers({ "x-t": "1" })).toBe(StopIteration);
    expect(s.forwarded?.ended).toBe(false);
    expect(s.forwarded?.trailers).toBeNull();
  });

  it("a local reply from on_request_trailers stops them (Continue becomes StopIteration) and answers", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "stop", "x-body-action": "watermark", "x-trailers-action": "local" } });
    s.sendRequestHeaders(false);
    s.sendRequestBody("ab", false);
    expect(s.sendRequestTrailers({ "x-t": "1" })).toBe(StopIteration);
    expect(s.forwarded).toBeNull();
    expect(s.localResponse?.status).toBe(403);
  });

  it("StopAllIteration: the trailers wait unseen; on continue the filter sees the body (end_stream 0), then them", async () => {
    const h = await TestHost.create({ wasm: g020, configuration: "http=lookup", clusters });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "http", "x-trailers-action": "continue" } });
    expect(s.sendRequestHeaders(false)).toBe(HeadersAction.StopAllIterationAndWatermark);
    expect(s.sendRequestBody("ab", false)).toBeNull();
    expect(s.sendRequestTrailers({ "x-t": "1" })).toBeNull();
    expect(logs(h, "request_trailers")).toEqual([]);
    h.httpCalls[0].respond({ status: 200 });
    expect(logs(h, "request_body")).toEqual(["request_body ctx=2 size=2 eos=0 body=ab"]);
    expect(logs(h, "request_trailers")).toEqual(["request_trailers ctx=2 n=1 trailers x-t=1"]);
    expect(s.forwarded?.body.toString()).toBe("ab");
    expect(s.forwarded?.trailers).toEqual({ "x-t": "1", "x-added": "yes" });
  });

  it("reach the filter while the downstream is read-disabled (HTTP/2 does not defer them), after any chunk still waiting", async () => {
    const h = await TestHost.create({ wasm: g100, configuration: "http=lookup", clusters });
    const headers = { "x-headers-action": "http", "x-body-action": "watermark", "x-buffer-limit": "4", "x-trailers-action": "continue" };
    const s = h.stream({ method: "POST", headers });
    s.sendRequestHeaders(false);
    s.sendRequestBody("abcdef", false); // held past the limit: the downstream is read-disabled
    expect(s.sendRequestTrailers({ "x-t": "1" })).toBe(Continue);
    expect(logs(h, "request_trailers")).toEqual(["request_trailers ctx=2 n=1 trailers x-t=1"]);
    expect(s.forwarded?.trailers).toEqual({ "x-t": "1", "x-added": "yes" });

    const w = h.stream({ method: "POST", headers });
    w.sendRequestHeaders(false);
    w.sendRequestBody("abcdef", false);
    w.sendRequestBody("gh", false); // waits: not read
    expect(w.sendRequestTrailers({ "x-t": "2" })).toBeNull(); // behind it
    expect(logs(h, "request_trailers")).toHaveLength(1);
    h.httpCalls[1].respond({ status: 200 });
    expect(logs(h, "request_trailers")).toEqual(["request_trailers ctx=2 n=1 trailers x-t=1", "request_trailers ctx=3 n=1 trailers x-t=2"]);
    expect(w.forwarded?.body.toString()).toBe("abcdefgh");
    expect(w.forwarded?.trailers).toEqual({ "x-t": "2", "x-added": "yes" });
  });
});
