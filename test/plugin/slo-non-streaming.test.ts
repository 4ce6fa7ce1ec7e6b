// predicted_latency learning from non-streaming answers: one total time, whose output tokens
// (usage) came one TPOT apart after the first (total = TTFT + TPOT x (tokens - 1), as a stream's
// TPOT is (end - first) / (tokens - 1)). A one-token answer holds no inter-token time: it used to
// teach the TPOT model its total minus the predicted TTFT (the TTFT's error, up to 3x the TPOT),
// so a pod answering short classifications looked slow per token. Host facade, real Redis.
import { describe, expect, it } from "vitest";
import type { TestHost, TestStream } from "../../host-test/facade/index.js";
import { CHAT_BODY, postChat, useRedisHost } from "./harness.js";
import { taughtHost } from "./slo-prompts.js";

const t = useRedisHost();

/** Answers `s` without streaming after `ms`: `tokens` output tokens in the usage. */
async function answerWhole(h: TestHost, s: TestStream, ms: number, tokens: number): Promise<void> {
  await h.redisIdle();
  h.advance(ms);
  s.sendResponseHeaders({ ":status": "200", "content-type": "application/json" });
  s.sendResponseBody(JSON.stringify({ choices: [{ message: { content: "yes" } }], usage: { prompt_tokens: 5, completion_tokens: tokens, total_tokens: 5 + tokens } }), true);
  s.complete();
  await h.redisIdle();
}

/** The TPOT the next request is predicted (the debug header), served at once. */
async function predictedTpot(h: TestHost): Promise<number> {
  const s = postChat(h, CHAT_BODY, { "x-slo-ttft-ms": "5000", "x-slo-tpot-ms": "1000" }).s;
  await answerWhole(h, s, 1, 1);
  return Number(/:tpot=([\d.]+)/.exec(String(s.response.headers["x-llmlb-debug"]))![1]);
}

describe("non-streaming answers", () => {
  it("a one-token answer teaches the TTFT, not the TPOT", async () => {
    const h = await taughtHost(t, {}); // streams: TTFT 20 ms, TPOT 10 ms
    const before = await predictedTpot(h);
    expect(before).toBeGreaterThan(5);
    expect(before).toBeLessThan(15);
    // Short classifications, 60 ms to their one token: the TTFT was predicted low.
    for (let i = 0; i < 30; i++) await answerWhole(h, postChat(h).s, 60, 1);
    expect(Math.abs(await predictedTpot(h) - before)).toBeLessThan(1);
  });

  it("an answer of n tokens teaches TTFT + TPOT x (n - 1)", async () => {
    const h = await taughtHost(t, {});
    const before = await predictedTpot(h);
    // 20 ms to the first token, then 10 ms per token: 3 tokens in 40 ms. Read as 3 gaps, the
    // TPOT would be learnt 6.7 ms and the TTFT 10 ms.
    for (let i = 0; i < 30; i++) await answerWhole(h, postChat(h).s, 40, 3);
    expect(Math.abs(await predictedTpot(h) - before)).toBeLessThan(1);
  });
});
