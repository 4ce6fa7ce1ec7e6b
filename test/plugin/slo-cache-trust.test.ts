// predicted_latency's trust in the prefix tree (assembly/policy/predicted_latency/cache_trust.ts):
// the tree says what was sent where, the engine's usage (prompt_tokens_details.cached_tokens)
// what it found. Through the host facade with a real Redis and a manual clock: two pods taught
// alike; a conversation's first message goes to pod X, and its follow-ups (half of each prompt
// that message) are predicted there as cached. X's answers say the cached tokens were found, or
// that none were (its cache lost them): then X's share of the tree counts less and less, and
// the follow-ups are predicted as the full prefill they are.
import { describe, expect, it } from "vitest";
import type { TestHost, TestStream } from "../../host-test/facade/index.js";
import { CLUSTER, host, hosts, postChat, useRedisHost } from "./harness.js";
import { start } from "./slo-streams.js";
import { followUp, longText, serve, taughtHost } from "./slo-prompts.js";

const t = useRedisHost();

/** Finishes `s` with one more token, the usage chunk (`cached` of `prompt` tokens found) and [DONE]. */
function finishWithUsage(s: TestStream, prompt: number, cached: number): void {
  s.sendResponseBody('data: {"choices":[{"delta":{"content":"a"}}]}\n\n', false);
  const usage = { prompt_tokens: prompt, completion_tokens: 2, total_tokens: prompt + 2, prompt_tokens_details: { cached_tokens: cached } };
  s.sendResponseBody(`data: ${JSON.stringify({ choices: [], usage })}\n\ndata: [DONE]\n\n`, true);
  s.complete();
}

/** The predicted TTFT of the debug header (ms). */
function predictedTtft(s: TestStream): number {
  const m = /:ttft=([\d.]+)/.exec(String(s.response.headers["x-llmlb-debug"] ?? ""));
  if (!m) throw new Error("no prediction in the debug header");
  return Number(m[1]);
}

/** X holds a first message (answered once); then `rounds` follow-ups, each answered with 120 ms to
 *  the first token and usage saying `found` of its prompt was cached. The follow-ups' predicted
 *  TTFTs, and X. */
async function followUps(h: TestHost, found: number, rounds: number, prefix = longText(1000)): Promise<{ x: string; predicted: number[]; to: string[] }> {
  const { s: first } = postChat(h, JSON.stringify({ model: "m", messages: [{ role: "user", content: prefix }], max_tokens: 16 }));
  await serve(h, first, 120);
  const x = first.forwarded!.upstream.address!;
  const predicted: number[] = [];
  const to: string[] = [];
  for (let i = 0; i < rounds; i++) {
    const { s } = postChat(h, followUp(prefix));
    await h.redisIdle();
    to.push(s.forwarded!.upstream.address!);
    h.advance(120);
    start(s);
    predicted.push(predictedTtft(s));
    h.advance(10);
    finishWithUsage(s, 2000, found * 2000);
    await h.redisIdle();
  }
  return { x, predicted, to };
}

describe("trust in the prefix tree (the engines' usage)", () => {
  it("a pod whose answers say the prefix was found stays trusted: the follow-ups are predicted cached there", async () => {
    const h = await taughtHost(t, {});
    const { x, predicted, to } = await followUps(h, 1, 10);
    expect(to.every((a) => a === x)).toBe(true);
    // Half of each prompt cached there, as the tree says: the prediction stays (it moves as the
    // model learns from the answers, 120 ms to the first token).
    expect(predicted[9] - predicted[1]).toBeLessThan(20);
  });

  it("a pod whose answers say none of it was found is trusted less: the follow-ups are predicted as full prefills", async () => {
    const { predicted } = await followUps(await taughtHost(t, {}), 0, 10);
    // The same answers but for the usage: 2,000 uncached tokens are ~100 ms more than 1,000, and
    // after 8 answers X's trust is 0.9^8 = 0.43.
    expect(predicted[9] - predicted[1]).toBeGreaterThan(40);
  });

  // The trust is the fleet's (field <host>|c of the pool's model hash, lua/model.lua): a second
  // gateway that saw none of X's answers reads it with the latency model.
  async function secondGatewayPredicts(found: number): Promise<number> {
    const a = await taughtHost(t, {});
    const prefix = longText(1000);
    await followUps(a, found, 10, prefix);
    const b = await host({
      configuration: { lb_policy: "predicted_latency", lb_config: {
        serviceFQDN: "redis.static", servicePort: 6379, timeout: 500, sloExploration: 0, modelRidge: 1000000, debugHeader: "x-llmlb-debug" } },
      redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(2) },
    });
    try {
      const { s } = postChat(b, followUp(prefix));
      await b.redisIdle();
      b.advance(120);
      start(s);
      return predictedTtft(s);
    } finally {
      b.close();
    }
  }

  it("another gateway trusts the pod as the answers taught the first one", async () => {
    const trusted = await secondGatewayPredicts(1);
    await t.client.flushall();
    t.host?.close();
    const distrusted = await secondGatewayPredicts(0);
    // As above: ~100 ms more for the 1,000 tokens X's cache is not trusted to hold.
    expect(distrusted - trusted).toBeGreaterThan(40);
  });
});
