// predicted_latency behind gateway-side queueing: the TTFT a client sees starts when its request
// arrived, so a request that waited in the queue has that much less of its TTFT SLO left when it
// is admitted (as a request held by late binding has). The pick judged the whole SLO, as if the
// request had just come: one that waited past its deadline was "met" and sent, a sheddable one
// never shed. Host facade, real Redis.
import { describe, expect, it } from "vitest";
import type { TestHost, TestStream } from "../../host-test/facade/index.js";
import { CHAT_BODY, advanceWithIo, postChat, useRedisHost } from "./harness.js";
import { taughtHost } from "./slo-prompts.js";

const t = useRedisHost();

/** `s` waits in the queue behind `running` for `ms`, then `running` ends and `s` is admitted. */
async function waitBehind(h: TestHost, running: TestStream, s: TestStream, ms: number): Promise<void> {
  await advanceWithIo(h, ms, 20);
  expect(s.forwarded).toBeNull();
  expect(s.localResponse).toBeNull();
  running.sendResponseHeaders({ ":status": "200" }, true);
  running.complete();
  await advanceWithIo(h, 40, 20);
}

describe("an SLO after a wait in the queue", () => {
  it("counts the wait: past its TTFT deadline a low-priority request is shed, a normal one sent late (held= in the debug header)", async () => {
    // Taught: 20 ms to the first token; one request of the pool at a time.
    const h = await taughtHost(t, { queueCapacity: 1, queuePollMs: 20, queueMaxWaitMs: 60000 });
    const slo = { "x-slo-ttft-ms": "100", "x-slo-tpot-ms": "1000" };
    const a = postChat(h).s;
    await h.redisIdle();
    const low = postChat(h, CHAT_BODY, { ...slo, "x-llm-priority": "low" }).s;
    await waitBehind(h, a, low, 300);
    expect(low.localResponse?.status).toBe(429);
    low.complete();
    const b = postChat(h).s;
    await h.redisIdle();
    const normal = postChat(h, CHAT_BODY, slo).s;
    await waitBehind(h, b, normal, 300);
    expect(normal.forwarded).not.toBeNull();
    normal.sendResponseHeaders({ ":status": "200", "content-type": "text/event-stream" });
    const debug = String(normal.response.headers["x-llmlb-debug"]);
    expect(debug).toContain("slo_unmet");
    expect(debug).toMatch(/:held=3\d\d/);
  });

  it("a request admitted at once has its whole SLO", async () => {
    const h = await taughtHost(t, { queueCapacity: 1, queuePollMs: 20 });
    const s = postChat(h, CHAT_BODY, { "x-slo-ttft-ms": "100", "x-slo-tpot-ms": "1000", "x-llm-priority": "low" }).s;
    await h.redisIdle();
    expect(s.forwarded).not.toBeNull();
    s.sendResponseHeaders({ ":status": "200", "content-type": "text/event-stream" });
    expect(String(s.response.headers["x-llmlb-debug"])).not.toContain("held=");
  });
});
