// The request body (bytes and parsed JSON, up to maxBodyBytes) leaves the Wasm VM's memory once the
// decision is final, not when the stream ends: streamed answers last minutes, and a VM with
// hundreds of open streams would otherwise hold every one's request body (filter/stream.ts
// decided()). Also a request held by late binding keeps only what its evaluations need.
import { describe, expect, it } from "vitest";
import { CLUSTER, host, hosts, postChat, useRedisHost } from "./harness.js";
import type { TestHost, TestStream } from "../../host-test/facade/index.js";
import { teach } from "./slo-streams.js";

const t = useRedisHost();

/** A chat body of about `kb` KiB. */
function bigChat(kb: number, n: number): string {
  return JSON.stringify({ model: "m", messages: [{ role: "user", content: `request ${n} ` + "lorem ipsum dolor sit amet ".repeat(kb * 38) }], max_tokens: 16 });
}

function pages(h: TestHost): number {
  return (h.vms[0].instance.exports.memory as WebAssembly.Memory).buffer.byteLength / 65536;
}

/** Sends `count` requests of ~`kb` KiB, keeping every stream open (none answered yet). */
async function openStreams(h: TestHost, count: number, kb: number, headers: Record<string, string> = {}): Promise<TestStream[]> {
  const open: TestStream[] = [];
  for (let i = 0; i < count; i++) {
    open.push(postChat(h, bigChat(kb, i), headers).s);
    await h.redisIdle();
  }
  return open;
}

describe("request bodies after the decision", () => {
  it("80 open streams of 256 KiB bodies (20 MiB) leave the VM's memory near where one left it", async () => {
    const h = t.host = await host({ configuration: { lb_policy: "prefix_cache", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 500 } }, redis: { url: t.redis.url } });
    await openStreams(h, 4, 256); // warm-up: the VM's working set for one such body
    const before = pages(h);
    const open = await openStreams(h, 80, 256);
    expect(open.every((s) => s.forwarded !== null)).toBe(true);
    // Held to the end of each stream, the bodies alone would take 320 pages (20 MiB) more.
    expect(pages(h) - before).toBeLessThan(100);
  });

  it("a request held by late binding keeps its SLO terms, not its body, and is still sent right", async () => {
    const cfg = { lb_policy: "predicted_latency", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 500, modelBatchSlots: 1, sloHoldMs: 60000, sloTtftMs: 60000, sloTpotMs: 60000, sloExploration: 0, debugHeader: "x-llmlb-debug" } };
    const h = t.host = await host({ configuration: cfg, redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(2) } });
    await teach(h); // then both one-slot pods busy
    const busy = await openStreams(h, 2, 1);
    const warm = await openStreams(h, 4, 256); // held too: the VM's working set for one such body
    const before = pages(h);
    const held = await openStreams(h, 60, 256);
    expect([...warm, ...held].every((s) => s.forwarded === null)).toBe(true);
    expect(h.metric("llmlb_slo_held")).toBeGreaterThanOrEqual(60);
    expect(pages(h) - before).toBeLessThan(100); // 60 x 256 KiB would be 240 pages
    // A freed slot still goes to a held request (the first held: FIFO among equal deadlines).
    busy[0].sendResponseHeaders({ ":status": "200" }, true);
    busy[0].complete();
    await h.redisIdle();
    expect(warm[0].forwarded).not.toBeNull();
    expect(h.metric("llmlb_slo_held")).toBe(63);
  });
});
