// Process-level services: metrics shared by the VMs (Envoy stats are per process), shared data
// with CAS and shared queues (cpp-host shared_data.cc / shared_queue.cc), ticks on the manual
// clock, log thresholds, and http_call record/reply.
import { beforeAll, describe, expect, it } from "vitest";
import { TestHost, WasmResult } from "../../host-test/facade/index.js";
import { MetricsRegistry } from "../../host-test/abi/metrics.js";
import { SharedData, SharedQueues } from "../../host-test/abi/shared-data.js";
import { buildGuest } from "./guests/build.js";
import { freePort } from "../helpers/ports.js";

let g: string;
beforeAll(async () => { g = await buildGuest("scripted-100"); });
const clusters = { c: [{ address: "10.0.0.1:8000" }], lookup: [{ address: "10.0.0.9:80" }] };

describe("metrics", () => {
  it("a name defined by every VM is one metric; increments from both VMs add up", async () => {
    const h = await TestHost.create({ wasm: g, clusters, workers: 2 });
    h.stream({ vm: 0 }).sendRequestHeaders(true);
    h.stream({ vm: 1 }).sendRequestHeaders(true);
    h.stream({ vm: 1 }).sendRequestHeaders(true);
    expect(h.metric("test_requests")).toBe(3);
    expect(h.plugin.metrics.prometheus()).toContain("# TYPE test_requests counter\ntest_requests 3\n");
  });

  it("registry rules: counters never decrease, gauges move, histograms are write-only", () => {
    const m = new MetricsRegistry();
    const c = m.define(0, "c").id, gg = m.define(1, "g").id, hi = m.define(2, "h").id;
    expect(m.define(0, "c").id).toBe(c);
    expect(m.increment(c, -1)).toBe(WasmResult.BadArgument);
    expect(m.increment(gg, 5)).toBe(WasmResult.Ok);
    expect(m.increment(gg, -2)).toBe(WasmResult.Ok);
    expect(m.get(gg)).toEqual({ status: WasmResult.Ok, value: 3 });
    expect(m.record(hi, 7)).toBe(WasmResult.Ok);
    expect(m.get(hi).status).toBe(WasmResult.BadArgument);
    expect(m.get(9999).status).toBe(WasmResult.NotFound);
    expect(m.prometheus()).toContain('h_bucket{le="10"} 1');
  });
});

describe("shared data and queues", () => {
  it("CAS: 0 is unconditional, a stale cas is CasMismatch, data is per vm_id", () => {
    const d = new SharedData();
    expect(d.get("vm", "k").status).toBe(WasmResult.NotFound);
    expect(d.set("vm", "k", Buffer.from("a"), 0)).toBe(WasmResult.Ok);
    const first = d.get("vm", "k");
    expect(d.set("vm", "k", Buffer.from("b"), first.cas!)).toBe(WasmResult.Ok);
    expect(d.set("vm", "k", Buffer.from("c"), first.cas!)).toBe(WasmResult.CasMismatch);
    expect(d.get("vm", "k").value!.toString()).toBe("b");
    expect(d.get("other", "k").status).toBe(WasmResult.NotFound);
  });

  it("queues: resolve by name, FIFO, Empty when drained, NotFound for unknown tokens", () => {
    const q = new SharedQueues();
    const ready: number[] = [];
    const t = q.register("vm", "q", (tok) => ready.push(tok));
    expect(q.resolve("vm", "q")).toBe(t);
    expect(q.resolve("vm", "nope")).toBeUndefined();
    q.enqueue(t, Buffer.from("1"));
    q.enqueue(t, Buffer.from("2"));
    expect(ready).toEqual([t, t]);
    expect(q.dequeue(t).data!.toString()).toBe("1");
    expect(q.dequeue(t).data!.toString()).toBe("2");
    expect(q.dequeue(t).status).toBe(WasmResult.Empty);
    expect(q.enqueue(999, Buffer.from("x"))).toBe(WasmResult.NotFound);
  });
});

describe("ticks, logs, http calls", () => {
  it("ticks follow the manual clock and stop when the period is set to 0", async () => {
    const h = await TestHost.create({ wasm: g, configuration: "tick=100;tick_stop_after=3" });
    h.advance(99);
    expect(h.logMessages().filter((m) => m.startsWith("tick"))).toHaveLength(0);
    h.advance(1000);
    expect(h.logMessages().filter((m) => m.startsWith("tick"))).toHaveLength(3);
  });

  it("the log threshold drops lower levels", async () => {
    const h = await TestHost.create({ wasm: g, logLevel: "warn" });
    expect(h.logs()).toHaveLength(0);
  });

  it("http_call: recorded, answered, response visible in the callback (map 6, buffer 4)", async () => {
    const h = await TestHost.create({ wasm: g, configuration: "http=lookup", clusters });
    const s = h.stream({ headers: { "x-headers-action": "http" } });
    s.sendRequestHeaders(true);
    expect(h.httpCalls[0].header(":path")).toBe("/lookup");
    h.httpCalls[0].respond({ status: 200, headers: { "x-a": "b" }, body: "hello" });
    expect(h.logMessages().find((m) => m.startsWith("http_response"))).toMatch(/headers=2 status=200 body=hello$/);
    expect(s.forwarded?.ended).toBe(true);
  });

  it("http_call to an unknown cluster is BadArgument; a timeout is the router's 504 local reply (audit row 10)", async () => {
    const h1 = await TestHost.create({ wasm: g, configuration: "http=nope", clusters });
    h1.stream({ headers: { "x-headers-action": "http" } }).sendRequestHeaders(true);
    expect(h1.logMessages().find((m) => m.startsWith("http_call"))).toMatch(/status=2/);
    const h2 = await TestHost.create({ wasm: g, configuration: "http=lookup", clusters });
    h2.stream({ headers: { "x-headers-action": "http" } }).sendRequestHeaders(true);
    h2.advance(1000);
    expect(h2.logMessages().find((m) => m.startsWith("http_response"))).toMatch(/headers=3 status=504 body=upstream request timeout$/);
  });

  it("a real http_call to a closed port is the router's 503 connect-failure reply, with :status and body", async () => {
    const port = await freePort();
    const h = await TestHost.create({ wasm: g, configuration: "http=lookup", http: "real", clusters: { ...clusters, lookup: [{ address: `127.0.0.1:${port}` }] } });
    h.stream({ headers: { "x-headers-action": "http" } }).sendRequestHeaders(true);
    await h.calloutsIdle();
    expect(h.logMessages().find((m) => m.startsWith("http_response"))).toMatch(
      /headers=3 status=503 body=upstream connect error or disconnect\/reset before headers. reset reason: connection failure$/);
  });
});
