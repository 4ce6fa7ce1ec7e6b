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
    expect(h.plugin.metrics.prometheus()).toContain("# TYPE test_requests counter\ntest_requests{} 3\n");
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
    expect(m.prometheus()).toContain('h_bucket{le="10"} 0'); // Envoy shows it after the stats flush
    m.mergeHistograms();
    expect(m.prometheus()).toContain('h_bucket{le="5"} 0\nh_bucket{le="10"} 1\n');
  });

  it("histograms print Envoy's circllhist approximations: bin midpoints in _sum, a bound counts only bins entirely below it", () => {
    const m = new MetricsRegistry();
    const hi = m.define(2, "h").id;
    for (const v of [0, 7, 50, 123]) m.record(hi, v);
    m.mergeHistograms();
    // Bins [0], [7, 7.1), [50, 51), [120, 130): midpoints 0 + 7.05 + 50.5 + 125.
    expect(m.valueOf("h")).toEqual({ count: 4, sum: 182.55 });
    const text = m.prometheus();
    expect(text).toContain('h_bucket{le="0.5"} 1\nh_bucket{le="1"} 1\nh_bucket{le="5"} 1\nh_bucket{le="10"} 2\nh_bucket{le="25"} 2\nh_bucket{le="50"} 2\nh_bucket{le="100"} 3\n');
    expect(text).toContain('h_bucket{le="250"} 4\n');
  });

  it("tags written into the name become labels only for the configured extraStatTags (Istio/Higress extractor)", () => {
    const tagged = new MetricsRegistry(["policy", "reason"]);
    const hit = tagged.define(0, "policy=.=prefix_cache;.;reason=.=prefix_hit;.;llmlb_picks_total").id;
    tagged.define(0, "policy=.=prefix_cache;.;reason=.=prefix_miss;.;llmlb_picks_total");
    tagged.increment(hit, 2);
    expect(tagged.prometheus()).toBe("# TYPE llmlb_picks_total counter\n" +
      'llmlb_picks_total{policy="prefix_cache",reason="prefix_hit"} 2\n' +
      'llmlb_picks_total{policy="prefix_cache",reason="prefix_miss"} 0\n\n');
    expect(tagged.valueOf("llmlb_picks_total", { reason: "prefix_hit", policy: "prefix_cache" })).toBe(2);
    // Without the extractors Envoy keeps the parts in the name and sanitizes it.
    const plain = new MetricsRegistry([]);
    plain.define(0, "policy=.=prefix_cache;.;llmlb_passthrough_total");
    expect(plain.prometheus()).toBe("# TYPE policy___prefix_cache___llmlb_passthrough_total counter\npolicy___prefix_cache___llmlb_passthrough_total{} 0\n\n");
    // A name that would start with a digit is not exported (prometheus_stats.cc metricName).
    plain.define(0, "9lives");
    expect(plain.prometheus()).not.toContain("9lives");
  });

  it("prints counters, then gauges, then histograms, each group sorted, histogram labels before le", () => {
    const m = new MetricsRegistry(["kind"]);
    m.define(2, "kind=.=a;.;lat_ms");
    m.define(1, "g");
    m.define(0, "b_total");
    m.define(0, "a_total");
    const text = m.prometheus();
    expect([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((x) => `${x[1]}:${x[2]}`)).toEqual(["a_total:counter", "b_total:counter", "g:gauge", "lat_ms:histogram"]);
    expect(text).toContain('lat_ms_bucket{kind="a",le="0.5"} 0\n');
    expect(text).toContain('lat_ms_bucket{kind="a",le="3600000"} 0\nlat_ms_bucket{kind="a",le="+Inf"} 0\nlat_ms_sum{kind="a"} 0\nlat_ms_count{kind="a"} 0\n');
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

describe("shared queues through a guest (cpp-host shared_queue.cc, context.cc)", () => {
  /** A stream that enqueues one item on "q", answered and ended (so it holds no root alive). */
  const enqueue = (h: TestHost, vm = 0) => {
    const s = h.stream({ vm, headers: { "x-headers-action": "enqueue", "x-queue": "q" } });
    s.sendRequestHeaders(true);
    s.sendResponseHeaders({ ":status": "200" }, true);
    s.complete();
  };
  const ready = (h: TestHost) => h.logMessages().filter((m) => m.startsWith("queue_ready"));
  const settle = () => new Promise((r) => setImmediate(r));

  it("proxy_on_queue_ready comes later, on the registering root; a deleted root gets nothing; a new root re-binds the queue and its items", async () => {
    const h = await TestHost.create({ wasm: g, configuration: "queue=q" });
    const token = /token=(\d+) root=(\d+)/.exec(h.logMessages().find((m) => m.startsWith("queue registered"))!)!;
    enqueue(h);
    expect(h.logMessages().some((m) => m === `enqueue resolve=0 token=${token[1]} status=0`)).toBe(true);
    expect(ready(h)).toEqual([]); // posted to the worker's thread, not called inside the enqueue
    await settle();
    expect(ready(h)).toEqual([`queue_ready root=${token[2]} token=${token[1]} items=1`]);
    // A new configuration whose root registers nothing: the old root, without streams, is deleted.
    h.updateConfiguration("tick=0");
    enqueue(h);
    await settle();
    expect(ready(h)).toHaveLength(1); // the context is gone: cpp-host calls nothing
    // A root registering the name again gets the same token and the item still queued.
    h.updateConfiguration("queue=q");
    const again = /token=(\d+) root=(\d+)/.exec(h.logMessages().filter((m) => m.startsWith("queue registered")).at(-1)!)!;
    expect(again[1]).toBe(token[1]);
    enqueue(h);
    await settle();
    expect(ready(h).at(-1)).toBe(`queue_ready root=${again[2]} token=${token[1]} items=2`);
  });

  it("another plugin on the same Envoy (same vm_id) reaches the same queue: its registration re-binds it, its enqueue finds it", async () => {
    const a = await TestHost.create({ wasm: g, configuration: "queue=q" });
    const b = await a.addPlugin({ wasm: g, configuration: "tick=0" });
    const token = /token=(\d+)/.exec(a.logMessages().find((m) => m.startsWith("queue registered"))!)![1];
    enqueue(b); // plugin b resolves "q": plugin a's queue
    expect(b.logMessages().some((m) => m === `enqueue resolve=0 token=${token} status=0`)).toBe(true);
    await settle();
    expect(ready(a)).toHaveLength(1);
    expect(b.plugin.sharedData).toBe(a.plugin.sharedData); // one map per process and vm_id
  });

  it("a queue another VM registered is resolved by name and its ready call goes to that VM", async () => {
    const h = await TestHost.create({ wasm: g, configuration: "queue=q", workers: 2 });
    // Both VMs registered "q": the second registration re-bound it to VM 1's root.
    enqueue(h, 0);
    await settle();
    expect(h.logMessages(undefined, { vm: 1 }).filter((m) => m.startsWith("queue_ready"))).toHaveLength(1);
    expect(h.logMessages(undefined, { vm: 0 }).filter((m) => m.startsWith("queue_ready"))).toHaveLength(0);
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

  it("a real http_call to a cluster with no healthy host is InternalFailure at once, and no callback follows (Envoy answers it inside send)", async () => {
    const h = await TestHost.create({ wasm: g, configuration: "http=lookup", http: "real", clusters: { ...clusters, lookup: [{ address: "127.0.0.1:9", health: "Unhealthy" }] } });
    h.stream({ headers: { "x-headers-action": "http" } }).sendRequestHeaders(true);
    await h.calloutsIdle();
    await new Promise((r) => setTimeout(r, 20));
    expect(h.logMessages().find((m) => m.startsWith("http_call"))).toMatch(/status=10/);
    expect(h.logMessages().find((m) => m.startsWith("http_response"))).toBeUndefined();
  });

  it("a real http_call to a closed port is the router's 503 connect-failure reply, with :status and body", async () => {
    const port = await freePort();
    const h = await TestHost.create({ wasm: g, configuration: "http=lookup", http: "real", clusters: { ...clusters, lookup: [{ address: `127.0.0.1:${port}` }] } });
    h.stream({ headers: { "x-headers-action": "http" } }).sendRequestHeaders(true);
    await h.calloutsIdle();
    expect(h.logMessages().find((m) => m.startsWith("http_response"))).toMatch(
      /headers=3 status=503 body=upstream connect error or disconnect\/reset before headers. reset reason: remote connection failure, transport failure reason: delayed connect error: 111$/);
  });
});
