// predicted_latency learning from streams that end early: a stream whose first token came and
// whose client then left (a "stop" button, a timeout on the whole answer) or whose upstream reset
// it has a TTFT as good as any. It taught nothing: a pod that slowed down while its clients gave up
// on long answers kept its old, fast TTFT. Host facade, real Redis.
import { describe, expect, it } from "vitest";
import type { TestHost, TestStream } from "../../host-test/facade/index.js";
import { CHAT_BODY, postChat, useRedisHost } from "./harness.js";
import { LOOSE, taughtHost } from "./slo-prompts.js";
import { start } from "./slo-streams.js";

const t = useRedisHost();

function predictedTtft(s: TestStream): number {
  return Number(/:ttft=([\d.]+)/.exec(String(s.response.headers["x-llmlb-debug"]))![1]);
}

/** A request whose first token comes after `ms`, then the client leaves. Its predicted TTFT. */
async function leftAfterFirstToken(h: TestHost, ms: number): Promise<number> {
  const s = postChat(h, CHAT_BODY, LOOSE).s;
  await h.redisIdle();
  h.advance(ms);
  start(s);
  h.advance(10);
  s.abort();
  await h.redisIdle();
  return predictedTtft(s);
}

describe("streams that end early", () => {
  it("teach their TTFT once the first token came", async () => {
    const h = await taughtHost(t, {}); // short prompts: 20 ms to the first token
    const before = await leftAfterFirstToken(h, 80);
    expect(before).toBeLessThan(30);
    let after = before;
    for (let i = 0; i < 40; i++) after = await leftAfterFirstToken(h, 80);
    expect(after).toBeGreaterThan(50);
  });

  it("teach nothing before it (no TTFT seen)", async () => {
    const h = await taughtHost(t, {});
    const before = await leftAfterFirstToken(h, 20);
    for (let i = 0; i < 40; i++) {
      const s = postChat(h, CHAT_BODY, LOOSE).s;
      await h.redisIdle();
      h.advance(5);
      s.abort();
      await h.redisIdle();
    }
    expect(Math.abs(await leftAfterFirstToken(h, 20) - before)).toBeLessThan(2);
  });
});
