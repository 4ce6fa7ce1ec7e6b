// Stream endings and VM failure. proxy_on_log, proxy_on_done, proxy_on_delete fire exactly once
// per stream whatever the ending, in that order on HTTP/1 and HTTP/2 (envoy
// ConnectionManagerImpl::doDeferredStreamDestroy logs before destroyFilters; audit row 2).
// A trap or proc_exit fails the VM; later calls are refused and streams fail closed with 503
// "wasm_fail_stream" (Envoy failStream) unless fail_open.
import { beforeAll, describe, expect, it } from "vitest";
import { TestHost } from "../../host-test/facade/index.js";
import { buildGuest } from "./guests/build.js";

let g100: string;
beforeAll(async () => { g100 = await buildGuest("scripted-100"); });
const clusters = { c: [{ address: "10.0.0.1:8000" }] };
const endLogs = (h: TestHost, ctx: number) =>
  h.logMessages().filter((m) => /^(done|log|delete) ctx=/.test(m) && m.includes(`ctx=${ctx}`)).map((m) => m.split(" ")[0]);

describe("stream endings", () => {
  it("the stream ends when the response's end of stream goes downstream, not later (Envoy doEndStream)", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream();
    s.sendRequestHeaders(true);
    s.sendResponseHeaders({ ":status": "200" }, false);
    expect(s.ended).toBeNull();
    s.sendResponseBody("ok", true);
    expect(s.ended).toBe("complete");
    expect(endLogs(h, s.contextId)).toEqual(["log", "done", "delete"]);
  });

  it("a local reply to a request still sending its body ends the stream at once (reset): no body callback follows", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ method: "POST", headers: { "x-headers-action": "local" } });
    s.sendRequestHeaders(false);
    expect(s.response.status).toBe(403);
    expect(s.ended).toBe("local_reply");
    expect(endLogs(h, s.contextId)).toEqual(["log", "done", "delete"]);
    s.sendRequestBody("late", true);
    expect(h.logMessages().some((m) => m.startsWith("request_body"))).toBe(false);
  });

  it("normal completion: log, done, delete once, in that order", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream();
    s.sendRequestHeaders(true);
    s.sendResponseHeaders({ ":status": "200" }, true);
    s.complete();
    s.complete();
    expect(endLogs(h, s.contextId)).toEqual(["log", "done", "delete"]);
    expect(h.logMessages()).toContain(`log ctx=${s.contextId} code=200 flags=0 details= upstream=10.0.0.1:8000`);
  });

  it("client abort: once, with the DC flag (0x4000) visible in proxy_on_log", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ method: "POST" });
    s.sendRequestHeaders(false);
    s.abort();
    s.complete();
    expect(endLogs(h, s.contextId)).toEqual(["log", "done", "delete"]);
    expect(h.logMessages().find((m) => m.startsWith(`log ctx=${s.contextId}`))).toContain("flags=16384");
    expect(s.ended).toBe("client_abort");
  });

  it("local reply: once, with the reply's code and details", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ headers: { "x-headers-action": "local" } });
    s.sendRequestHeaders(true);
    s.complete();
    expect(endLogs(h, s.contextId)).toEqual(["log", "done", "delete"]);
    expect(h.logMessages()).toContain(`log ctx=${s.contextId} code=403 flags=0 details=test_403 upstream=`);
    expect(s.ended).toBe("local_reply");
  });

  it("close_stream resets the stream (deferred) and the ending still fires once", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ headers: { "x-headers-action": "close" } });
    s.sendRequestHeaders(true);
    expect(h.logMessages()).toContain("close status=0");
    expect(s.resetReason).toBe("close_stream");
    s.stream.finish("filter_reset");
    expect(endLogs(h, s.contextId)).toEqual(["log", "done", "delete"]);
  });
});

describe("VM failure", () => {
  it("proc_exit fails the VM: this stream gets 503 wasm_fail_stream and, without recovery, later calls are refused", async () => {
    const h = await TestHost.create({ wasm: g100, clusters, profile: { vmRecoveryIntervalMs: 0 } });
    const s = h.stream({ headers: { "x-headers-action": "exit" } });
    s.sendRequestHeaders(true);
    expect(h.vms[0].failed).toBe(true);
    expect(h.logs("critical")[0].message).toMatch(/proc_exit\(1\)/);
    expect(s.response.status).toBe(503);
    expect(s.localResponse?.details).toBe("wasm_fail_stream");
    expect(s.forwarded).toBeNull();
    s.complete();
    const refusedAfterFirst = h.vms[0].refusedCalls;
    expect(refusedAfterFirst).toBeGreaterThan(0);
    const s2 = h.stream();
    s2.sendRequestHeaders(true);
    expect(s2.response.status).toBe(503);
    expect(h.vms[0].refusedCalls).toBeGreaterThan(refusedAfterFirst);
    // No guest callback ran for the second stream.
    expect(h.logMessages().some((m) => m.includes(`ctx=${s2.contextId}`))).toBe(false);
  });

  it("a trap (unreachable) fails the VM the same way", async () => {
    const h = await TestHost.create({ wasm: g100, clusters });
    const s = h.stream({ headers: { "x-headers-action": "trap" } });
    s.sendRequestHeaders(true);
    expect(h.vms[0].failureReason).toMatch(/trap in proxy_on_request_headers/);
    expect(s.response.status).toBe(503);
  });

  it("with fail_open the request passes through a failed VM", async () => {
    const h = await TestHost.create({ wasm: g100, clusters, failOpen: true });
    h.stream({ headers: { "x-headers-action": "exit" } }).sendRequestHeaders(true);
    const s = h.stream();
    s.sendRequestHeaders(true);
    expect(s.forwarded?.ended).toBe(true);
    expect(s.response.status).toBeNull();
  });

  it("one failed VM does not affect the other worker VM", async () => {
    const h = await TestHost.create({ wasm: g100, clusters, workers: 2 });
    h.stream({ vm: 0, headers: { "x-headers-action": "exit" } }).sendRequestHeaders(true);
    const s = h.stream({ vm: 1 });
    s.sendRequestHeaders(true);
    expect(h.vms.map((v) => v.failed)).toEqual([true, false]);
    expect(s.forwarded?.ended).toBe(true);
  });
});

describe("effective context", () => {
  it("a finished stream is unknown to set_effective_context (BadArgument) and nothing is touched", async () => {
    const h = await TestHost.create({ wasm: g100, configuration: "http=lookup", clusters: { ...clusters, lookup: [{ address: "10.0.0.9:80" }] } });
    const s = h.stream({ headers: { "x-headers-action": "http" } });
    s.sendRequestHeaders(true);
    s.abort();
    h.httpCalls[0].respond({ status: 200, body: "late" });
    expect(h.logMessages()).toContain("effective status=2");
    expect(s.forwarded).toBeNull();
  });
});
