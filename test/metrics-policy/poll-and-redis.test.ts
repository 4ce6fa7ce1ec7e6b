// endpoint_metrics with metricsSource: poll (scrapes through an ORIGINAL_DST cluster, recorded
// http calls answered by the test) and with Redis accounting (lua/charge.lua on a real server).
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import type { TestHost } from "../../host-test/facade/index.js";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { A, B, METRICS_CLUSTER, chat, makeHost, metricsConfig, picked, vllmBody } from "./harness.js";

let h: TestHost | null = null;
afterEach(() => { h?.close(); h = null; });

const POLL = { metricsSource: "poll", metricsCluster: METRICS_CLUSTER, scrapeIntervalMs: 1000, staleAfterMs: 3000 };
const pollConfig = (extra: Record<string, unknown> = {}) => metricsConfig({ ...POLL, ...extra });

/** Two rules polling the same pods: the route's own, and route llm2's for another target metric. */
const TWO_RULES = {
  lb_policy: "endpoint_metrics", lb_config: POLL,
  _rules_: [{ _match_route_: ["llm2"], lb_policy: "endpoint_metrics", lb_config: { ...POLL, metric_policy: "least", target_metric: "vllm:num_requests_waiting" } }],
};

/** The pod a scrape call is for. */
const podOf = (c: TestHost["httpCalls"][number]) => c.header("x-envoy-original-dst-host")!;

/** Answers every scrape call pending now with the body `bodyOf` gives its pod; returns how many. */
function answerScrapes(host: TestHost, bodyOf: (pod: string) => string): number {
  const calls = [...host.httpCalls];
  for (const c of calls) c.respond({ status: 200, body: bodyOf(podOf(c)) });
  return calls.length;
}

/** A 7 requests waiting, B none. */
const aBusy = (pod: string) => (pod === A ? vllmBody(7) : vllmBody(0));

describe("metricsSource: poll", () => {
  it("scrapes each known host with its own call and picks from the answers", async () => {
    h = await makeHost(pollConfig(), [{ address: A }, { address: B }]);
    chat(h).complete(); // teaches the plugin the candidates (ticks have no stream)
    h.advance(1000);
    const calls = [...h.httpCalls];
    expect(calls.map((c) => podOf(c)).sort()).toEqual([A, B]);
    for (const c of calls) {
      expect(c.cluster).toBe(METRICS_CLUSTER);
      expect(c.header(":path")).toBe("/metrics");
      expect(c.timeoutMs).toBe(500);
    }
    const byHost = (x: string) => calls.find((c) => podOf(c) === x)!;
    byHost(A).respond({ status: 200, body: vllmBody(4) });
    byHost(B).respond({ status: 200, body: vllmBody(0) });
    h.advance(200); // past reparseIntervalMs
    for (let i = 0; i < 3; i++) { const s = chat(h); expect(picked(s)).toBe(B); s.complete(); }
  });

  it("two rules polling the same pods for different target metrics each scrape and keep their own report (shared data is one namespace)", async () => {
    h = await makeHost(TWO_RULES, [{ address: A }, { address: B }], { workers: 2 });
    for (let vm = 0; vm < 2; vm++) { chat(h, { route: "llm", vm }).complete(); chat(h, { route: "llm2", vm }).complete(); }
    let scrapes = 0;
    for (let i = 0; i < 5; i++) { h.advance(1000); scrapes += answerScrapes(h, aBusy); }
    expect(scrapes).toBe(5 * 2 * 2); // each interval: both pods for both rules, by one of the two VMs
    h.advance(300);
    for (let i = 0; i < 4; i++) { const st = chat(h, { route: "llm2", vm: i % 2 }); expect(picked(st)).toBe(B); st.complete(); }
  });

  it("one VM, two rules polling the same pods: each rule's scrape goes out in the same tick", async () => {
    // A scrape in flight for one rule once held back the other rule's scrape of the same address.
    h = await makeHost(TWO_RULES, [{ address: A }, { address: B }]);
    for (const route of ["llm", "llm2"]) chat(h, { route }).complete();
    let scrapes = 0;
    for (let i = 0; i < 3; i++) { h.advance(1000); scrapes += answerScrapes(h, aBusy); }
    expect(scrapes).toBe(3 * 2 * 2);
  });

  it("a wall-clock step back, then every VM replaced (crash recovery): the new VMs run the old ones' clock, scrapes go on", async () => {
    h = await makeHost(pollConfig(), [{ address: A }, { address: B }], { workers: 2 });
    const answerAll = (bodies: Record<string, string>) => answerScrapes(h!, (pod) => bodies[pod]);
    for (let vm = 0; vm < 2; vm++) chat(h, { vm }).complete();
    h.advance(1000);
    answerAll({ [A]: vllmBody(0), [B]: vllmBody(4) });
    h.advance(300);
    h.stepWallClock(-3_600_000); // an hour back: the running VMs' clocks ignore it
    for (let i = 0; i < 3; i++) { h.advance(1000); answerAll({ [A]: vllmBody(0), [B]: vllmBody(4) }); }
    // Every VM fails and is re-created (Envoy's crash recovery; in Higress also a new plugin image
    // on the same vm_id): the shared data stays, with claims and reports in the old VMs' clock.
    for (const vm of [...h.vms]) vm.invoke("proxy_on_request_headers", 0, [4242, 0, 1]);
    for (let vm = 0; vm < 2; vm++) chat(h, { vm }).complete();
    expect(h.plugin.recoveries).toBe(2);
    let scrapes = 0; // A is the busy one now
    for (let i = 0; i < 10; i++) { h.advance(1000); scrapes += answerAll({ [A]: vllmBody(9), [B]: vllmBody(0) }); }
    expect(scrapes).toBeGreaterThanOrEqual(18); // both pods, every interval (none: a claim an hour "ahead")
    h.advance(300);
    for (let vm = 0; vm < 2; vm++) { const s = chat(h, { vm }); expect(picked(s)).toBe(B); s.complete(); }
  });

  it("a slow host does not hold back the others; its report goes stale", async () => {
    h = await makeHost(pollConfig(), [{ address: A }, { address: B }]);
    chat(h).complete();
    h.advance(1000);
    const first = [...h.httpCalls];
    first.find((c) => podOf(c) === A)!.respond({ status: 200, body: vllmBody(0) });
    first.find((c) => podOf(c) === B)!.respond({ status: 200, body: vllmBody(3) });
    // From now on B answers; A never does (its calls time out after 500 ms).
    for (let t = 0; t < 4; t++) {
      h.advance(1000);
      const b = h.httpCalls.find((c) => podOf(c) === B);
      expect(b).toBeDefined();
      b!.respond({ status: 200, body: vllmBody(3) });
    }
    h.advance(200);
    // A's last report is 4 s old (> staleAfterMs 3 s): counted as saturated, so B is picked.
    for (let i = 0; i < 3; i++) { const s = chat(h); expect(picked(s)).toBe(B); s.complete(); }
  });

  it("a polled body is complete: its last line counts without a trailing line break", async () => {
    // Envoy hands over the whole response (AsyncRequestImpl buffers it to the end); only Higress's
    // health-check text is cut at 64 KiB, where a last line without its break may be a cut one.
    h = await makeHost(pollConfig(), [{ address: A }, { address: B }]);
    chat(h).complete();
    h.advance(1000);
    // A's queue is its last line, printed without "\n" (an exporter may end so).
    answerScrapes(h, (pod) => pod === A ? vllmBody(0, 0).replace(/vllm:num_requests_waiting\{[^\n]*\n/, "") +
      'vllm:num_requests_waiting{engine="0",model_name="m"} 9.0' : vllmBody(2));
    h.advance(200);
    for (let i = 0; i < 3; i++) { const s = chat(h); expect(picked(s)).toBe(B); s.complete(); }
  });

  it("a LoRA adapter name with an escaped line break does not make the pod's report unreadable", async () => {
    // Label values unescape \n to a line break; the report shared between VMs is line-based.
    h = await makeHost(pollConfig(), [{ address: A }, { address: B }]);
    chat(h).complete();
    h.advance(1000);
    answerScrapes(h, (pod) => pod === A
      ? vllmBody(0) + 'vllm:lora_requests_info{max_lora="2",running_lora_adapters="x\\ny,z",waiting_lora_adapters=""} 1.7e9\n' : vllmBody(3));
    h.advance(200);
    for (let i = 0; i < 3; i++) { const s = chat(h); expect(picked(s)).toBe(A); s.complete(); }
  });

  it("scrapes Envoy refuses (a metricsCluster it does not know) warn at most once per 10 s, not per pod and tick", async () => {
    const C = "10.0.0.3:8000";
    h = await makeHost(pollConfig({ metricsCluster: "no-such-cluster" }), [{ address: A }, { address: B }, { address: C }]);
    chat(h).complete();
    for (let i = 0; i < 9; i++) h.advance(1000);
    const warned = h.logMessages("warn").filter((m) => m.includes("scrape"));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain("no-such-cluster");
    h.advance(2000); // 11 s after the first: the next one, with the count of those left out
    expect(h.logMessages("warn").filter((m) => m.includes("scrape")).slice(1)).toEqual([expect.stringMatching(/\(\d+ more since the last such warning\)$/)]);
  });

  it("pods answering the scrape with no usable metrics (a wrong metricsPath: 404; another server) say so in a warning", async () => {
    h = await makeHost(pollConfig({ metricsPath: "/stats" }), [{ address: A }, { address: B }]);
    chat(h).complete();
    h.advance(1000);
    for (const c of [...h.httpCalls]) c.respond({ status: 404, body: "not found" });
    expect(h.logMessages("warn").filter((m) => m.includes("scrape"))).toEqual([expect.stringMatching(/10\.0\.0\.\d:8000\/stats: status 404$/)]);
    h.advance(10_000);
    for (const c of [...h.httpCalls]) c.respond({ status: 200, body: "# HELP go_goroutines\ngo_goroutines 12\n" });
    expect(h.logMessages("warn").filter((m) => m.includes("scrape")).slice(1)).toEqual([expect.stringMatching(/10\.0\.0\.\d:8000\/stats: no vLLM or SGLang load metric$/)]);
  });

  it("one VM per gateway scrapes a host per interval", async () => {
    h = await makeHost(pollConfig(), [{ address: A }, { address: B }], { workers: 3 });
    for (let vm = 0; vm < 3; vm++) chat(h, { vm }).complete();
    h.advance(1000);
    const targets = h.httpCalls.map((c) => podOf(c)).sort();
    expect(targets).toEqual([A, B]);
  });
});

describe("Redis accounting (charge.lua)", () => {
  const suite = useRedisSuite();
  let server: RedisFixture;
  let redis: Redis;
  beforeAll(() => { ({ server, redis } = suite); });

  it("leases the chosen host in the shared pool and releases it when the stream ends", async () => {
    h = await makeHost(metricsConfig({ serviceFQDN: "redis.static", servicePort: 6379, keyPrefix: `em${Date.now()}` }),
      [{ address: A, metrics: vllmBody(0) }, { address: B, metrics: vllmBody(4) }],
      { redis: { url: `redis://${server.host}:${server.port}` } });
    const s = chat(h);
    await h.redisIdle();
    expect(picked(s)).toBe(A);
    const keys = await redis.keys("{em*:load");
    expect(keys.length).toBe(1);
    expect(Number(await redis.zscore(keys[0], A))).toBe(1);
    s.sendResponseHeaders({ ":status": "200" }, true);
    s.complete();
    await h.redisIdle();
    expect(Number(await redis.zscore(keys[0], A))).toBe(0);
  });

  it("in-flight counts between reads: picks add at once, finished requests leave at once", async () => {
    // Identical metrics: the fewest in flight decides. No tick runs (manual clock), so nothing is
    // read from Redis here: the counts are this VM's own picks and releases.
    h = await makeHost(metricsConfig({ serviceFQDN: "redis.static", servicePort: 6379, keyPrefix: `if${Date.now()}` }),
      [{ address: A, metrics: vllmBody(0, 2) }, { address: B, metrics: vllmBody(0, 2) }],
      { redis: { url: `redis://${server.host}:${server.port}` } });
    const first = chat(h);
    await h.redisIdle();
    const second = chat(h);
    await h.redisIdle();
    expect(picked(second)).not.toBe(picked(first)); // the first one's host has one in flight
    first.sendResponseHeaders({ ":status": "200" }, true);
    first.complete();
    await h.redisIdle();
    for (let i = 0; i < 3; i++) {
      const next = chat(h);
      await h.redisIdle();
      // The finished request no longer counts: its host is the less loaded one again.
      expect(picked(next)).toBe(picked(first));
      next.complete();
      await h.redisIdle();
    }
  });

  it("falls back to a local lease on the chosen host when Redis is unreachable", async () => {
    h = await makeHost(metricsConfig({ serviceFQDN: "redis.static", servicePort: 6379 }),
      [{ address: A, metrics: vllmBody(0) }, { address: B, metrics: vllmBody(4) }],
      { redis: { url: "redis://127.0.0.1:1" } });
    const s = chat(h);
    await h.redisIdle();
    expect(picked(s)).toBe(A);
    expect(s.overrideHost.honoured).toBe(true);
  });
});
