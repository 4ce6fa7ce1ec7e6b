// endpoint_metrics with Higress's health-check metrics (get_upstream_hosts `metrics`), no Redis:
// the GIE filter tree on real bodies, the in-flight correction between health checks,
// saturation shedding by priority, rate_limit, and one parse per gateway (shared data).
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { TestHost } from "../../host-test/facade/index.js";
import type { SharedData } from "../../host-test/abi/shared-data.js";
import { A, B, C, CLUSTER, METRICS_CLUSTER, WASM, chat, makeHost, metricsConfig, picked, vllmBody } from "./harness.js";

let h: TestHost | null = null;
afterEach(() => { h?.close(); h = null; });

describe("endpoint_metrics from health-check bodies", () => {
  it("picks the host in the least-queue and least-KV bands", async () => {
    h = await makeHost(metricsConfig(), [
      { address: A, metrics: vllmBody(4, 2, 0.1) },
      { address: B, metrics: vllmBody(0, 2, 0.6) },
      { address: C, metrics: vllmBody(0, 2, 0.2) },
    ]);
    // Queue band {B, C} (min 0, max 4, width 1); KV band of those: 0.2 -> C.
    for (let i = 0; i < 5; i++) {
      const s = chat(h);
      expect(picked(s)).toBe(C);
      expect(s.forwarded?.upstream.address).toBe(C);
      s.complete();
    }
  });

  it("reads a real vLLM body from the fixtures (two engines, LoRA)", async () => {
    const body = readFileSync("test/fixtures/metrics/vllm-v0.x.txt", "utf8");
    h = await makeHost(metricsConfig(), [{ address: A, metrics: body }, { address: B, metrics: vllmBody(0, 0, 0.0) }]);
    const s = chat(h);
    expect(picked(s)).toBe(B); // the fixture host has 2 waiting, B none
    expect(s.response.status === null || s.response.status !== 429).toBe(true);
  });

  it("counts requests sent since the last health check (in-flight correction)", async () => {
    h = await makeHost(metricsConfig({ queueLimit: 0 }), [
      { address: A, metrics: vllmBody(0) },
      { address: B, metrics: vllmBody(3) },
    ]);
    const hosts: Array<string | null> = [];
    for (let i = 0; i < 10; i++) hosts.push(picked(chat(h))); // streams stay open
    // The first three go to A (band: min 0, max 3, width 1); then A's unseen in-flight requests
    // make it as busy as B, and B gets traffic although its scraped queue never changed.
    expect(hosts.slice(0, 3)).toEqual([A, A, A]);
    expect(hosts.filter((x) => x === B).length).toBeGreaterThanOrEqual(3);
  });

  it("by default only low priority is shed when every host is saturated (Higress never sheds)", async () => {
    h = await makeHost(metricsConfig({ queueLimit: 8 }), [
      { address: A, metrics: vllmBody(9) },
      { address: B, metrics: vllmBody(12) },
    ]);
    const normal = chat(h);
    expect(normal.localResponse).toBeNull();
    expect(picked(normal)).toBe(A); // the least loaded of the saturated hosts
    const low = chat(h, { headers: { "x-llm-priority": "low" } });
    expect(low.localResponse?.status).toBe(429);
  });

  it("shedWhenSaturated normal: sheds when every host is saturated; high priority bypasses, low is shed earlier", async () => {
    h = await makeHost(metricsConfig({ queueLimit: 8, lowPriorityFraction: 0.5, shedWhenSaturated: "normal" }), [
      { address: A, metrics: vllmBody(9) },
      { address: B, metrics: vllmBody(12) },
    ]);
    const normal = chat(h);
    expect(normal.localResponse?.status).toBe(429);
    expect(normal.localResponse?.headers["retry-after"]).toBe("1");
    const high = chat(h, { headers: { "x-llm-priority": "high" } });
    expect(high.localResponse).toBeNull();
    expect(picked(high)).toBe(A);

    h.setUpstreamHosts("outbound|8000||vllm.static", [{ address: A, metrics: vllmBody(5) }, { address: B, metrics: vllmBody(12) }]);
    h.advance(1000); // past reparseIntervalMs: the new bodies are read
    expect(picked(chat(h))).toBe(A); // 5 < 8
    const low = chat(h, { headers: { "x-llm-priority": "low" } });
    expect(low.localResponse?.status).toBe(429); // 5 >= 8 * 0.5
  });

  it("shedWhenSaturated never: nothing is shed, low priority included (no host within queueThreshold: placed as a normal request)", async () => {
    const hosts = [{ address: A, metrics: vllmBody(9) }, { address: B, metrics: vllmBody(12) }];
    h = await makeHost(metricsConfig({ queueLimit: 8, shedWhenSaturated: "never" }), hosts);
    for (const priority of ["low", "normal", "high"]) {
      const s = chat(h, { headers: { "x-llm-priority": priority } });
      expect(s.localResponse, priority).toBeNull();
      expect(picked(s), priority).toBe(A); // the least loaded of the saturated hosts
    }
    // Saturation off: only the filter tree's queueThreshold (5) stands between a low-priority
    // request and the hosts. low (the default) sheds it there, as documented; never does not.
    h.close();
    h = await makeHost(metricsConfig({ queueLimit: 0 }), hosts);
    expect(chat(h, { headers: { "x-llm-priority": "low" } }).localResponse?.status).toBe(429);
    expect(chat(h).localResponse).toBeNull();
    h.close();
    h = await makeHost(metricsConfig({ queueLimit: 0, shedWhenSaturated: "never" }), hosts);
    const low = chat(h, { headers: { "x-llm-priority": "low" } });
    expect(low.localResponse).toBeNull();
    expect(picked(low)).toBe(A);
  });

  it("hosts without metrics do not cause shedding: least in-flight instead", async () => {
    h = await makeHost(metricsConfig(), [{ address: A }, { address: B }]);
    const first = picked(chat(h));
    const second = picked(chat(h));
    expect(new Set([first, second])).toEqual(new Set([A, B]));
  });

  it("a host without fresh metrics counts as saturated while others report (stalePolicy saturated)", async () => {
    h = await makeHost(metricsConfig(), [{ address: A }, { address: B, metrics: vllmBody(3) }]);
    for (let i = 0; i < 4; i++) { const s = chat(h); expect(picked(s)).toBe(B); s.complete(); }
    h.close();
    h = await makeHost(metricsConfig({ stalePolicy: "inflight_only" }), [{ address: A }, { address: B, metrics: vllmBody(3) }]);
    const seen = new Set<string | null>();
    for (let i = 0; i < 4; i++) { const s = chat(h); seen.add(picked(s)); s.complete(); }
    expect(seen.has(A)).toBe(true); // A's effective queue is its in-flight count: 0
  });

  it("rate_limit moves picks off a host over its share of the window", async () => {
    h = await makeHost(metricsConfig({ rate_limit: 0.5 }), [
      { address: A, metrics: vllmBody(0, 0, 0.0) },
      { address: B, metrics: vllmBody(4, 0, 0.5) },
    ]);
    const counts = new Map<string | null, number>();
    for (let i = 0; i < 20; i++) {
      const s = chat(h);
      counts.set(picked(s), (counts.get(picked(s)) ?? 0) + 1);
      s.complete();
    }
    // Without the limit all 20 go to A; with it A keeps at most about half.
    expect(counts.get(A)!).toBeLessThanOrEqual(11);
    expect(counts.get(B)!).toBeGreaterThanOrEqual(9);
  });

  it("rate_limit: rules of different window sizes on the same pods keep their own shared windows", async () => {
    h = await makeHost({
      ...metricsConfig({ rate_limit: 0.5, window_size: 10 }),
      _rules_: [{ _match_route_: ["llm2"], ...metricsConfig({ rate_limit: 0.5, window_size: 100 }) }],
    }, [{ address: A, metrics: vllmBody(0) }, { address: B, metrics: vllmBody(1) }]);
    for (const route of ["llm", "llm2"]) {
      const s = h.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route, headers: { "content-type": "application/json" } });
      s.sendRequestHeaders(false);
      s.sendRequestBody(JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }), true);
      s.complete();
    }
    // One window each: a window of 10 picks would cut the other rule's 100 (and purge it sooner).
    expect(h.plugin.sharedData.keys("").filter((k) => k.startsWith("llmlb.empicks|"))).toHaveLength(2);
  });

  it("rate_limit empties the shared windows of candidate sets unused for a minute when it moves to a new one (shared data has no delete)", async () => {
    const Y = "outbound|8000||vllm-y.static";
    const Z = "outbound|8000||vllm-z.static";
    h = await TestHost.create({ wasm: WASM, configuration: metricsConfig({ rate_limit: 0.5, window_seconds: 1 }), logLevel: "warn",
      clusters: { [CLUSTER]: [{ address: A, metrics: vllmBody(0) }, { address: B, metrics: vllmBody(1) }],
        [Y]: [{ address: B, metrics: vllmBody(1) }, { address: C, metrics: vllmBody(0) }],
        [Z]: [{ address: A, metrics: vllmBody(0) }, { address: C, metrics: vllmBody(1) }], [METRICS_CLUSTER]: [] } });
    const send = (cluster: string) => {
      const s = h!.stream({ method: "POST", path: "/v1/chat/completions", cluster, route: "llm", headers: { "content-type": "application/json" } });
      s.sendRequestHeaders(false);
      s.sendRequestBody(JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }), true);
      s.complete();
    };
    const shared = h.plugin.sharedData as SharedData;
    const sizes = () => shared.keys("").filter((k) => k.startsWith("llmlb.empicks|")).map((k) => shared.get("", k).value!.length);
    send(CLUSTER);
    h.advance(1000);
    send(Y); // a new set: the first, used a second ago, is kept
    expect(sizes().filter((n) => n > 0).length).toBe(2);
    h.advance(61_000);
    send(Y); // a set it knows: nothing swept
    expect(sizes().filter((n) => n > 0).length).toBe(2);
    send(Z); // a new set: the first (62 s unused) is emptied, Y (just used) kept
    expect(sizes().length).toBe(3);
    expect(sizes().filter((n) => n > 0).length).toBe(2);
    send(CLUSTER); // used again: written again
    expect(sizes().filter((n) => n > 0).length).toBe(3);
  });

  it("one VM parses a body; the other VMs reuse its parse from shared data", async () => {
    h = await makeHost(metricsConfig(), [{ address: A, metrics: vllmBody(0) }, { address: B, metrics: vllmBody(2) }], { workers: 2 });
    expect(picked(chat(h, { vm: 0 }))).toBe(A);
    const shared = h.plugin.sharedData;
    const key = shared.keys("").find((k) => k.startsWith("llmlb.em|") && k.endsWith(`|${A}`))!;
    const entry = shared.get("", key);
    expect(entry.status).toBe(0);
    const fields = entry.value!.toString("utf8").split("\n");
    expect(fields[0]).toBe("em1");
    expect(Number(fields[4])).toBe(0); // waiting as parsed
    // Forge the shared parse (same fingerprint, 50 waiting): VM 1 must use it rather than parse.
    fields[4] = "50";
    shared.set("", key, Buffer.from(fields.join("\n")), 0);
    expect(picked(chat(h, { vm: 1 }))).toBe(B);
  });

  it("LoRA affinity: a request for a running adapter goes to its host", async () => {
    h = await makeHost(metricsConfig({ queueLimit: 0 }), [
      { address: A, metrics: vllmBody(0, 1, 0.1, { running: [], max: 1 }) },
      { address: B, metrics: vllmBody(6, 1, 0.1, { running: ["sql-lora"], max: 1 }) },
    ]);
    expect(picked(chat(h, { model: "sql-lora" }))).toBe(B);
    expect(picked(chat(h, { model: "m" }))).toBe(A);
  });
});
