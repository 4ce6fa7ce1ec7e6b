// Prompts and a taught host for predicted_latency tests through the facade: long prompts unlike
// any other, follow-ups sharing a first message, and two pods taught alike (short prompts 20 ms
// to the first token, 1,000-token prompts 120 ms).
import type { TestHost, TestStream } from "../../host-test/facade/index.js";
import { CHAT_BODY, CLUSTER, host, hosts, postChat, type RedisHostSuite } from "./harness.js";
import { finish, start } from "./slo-streams.js";

export const LOOSE = { "x-slo-ttft-ms": "5000", "x-slo-tpot-ms": "1000" };

/** A chat body of a prompt of about `tokens` tokens (4 chars each), unlike any other (no prefix hit). */
let bodies = 0;
export function longBody(tokens: number): string {
  bodies++;
  // Every word of one body the same 3 characters, unlike any other body's (base 36: 46,656 bodies).
  const word = bodies.toString(36).padStart(3, "0");
  const words = Array.from({ length: tokens }, () => word).join(" ");
  return JSON.stringify({ model: "m", messages: [{ role: "user", content: words }], max_tokens: 16 });
}

/** The first message's text of a fresh longBody (a prefix for followUp). */
export function longText(tokens: number): string {
  return JSON.parse(longBody(tokens)).messages[0].content as string;
}

/** A conversation whose first message is `prefix` and whose last is new (about 1,000 tokens more). */
export function followUp(prefix: string): string {
  return JSON.stringify({ model: "m", messages: [{ role: "user", content: prefix }, { role: "assistant", content: "ok" }, { role: "user", content: longText(1000) }], max_tokens: 16 });
}

/** Serves `s` (already sent): first token after `ttftMs`, TPOT 10 ms. */
export async function serve(h: TestHost, s: TestStream, ttftMs: number): Promise<void> {
  await h.redisIdle();
  h.advance(ttftMs);
  start(s);
  h.advance(10);
  finish(s);
  await h.redisIdle();
}

/** `pods` pods (the suite's host) taught alike: short prompts 20 ms to the first token, 1,000-token prompts 120 ms. */
export async function taughtHost(t: RedisHostSuite, extra: Record<string, unknown>, pods = 2): Promise<TestHost> {
  const h = t.host = await host({
    configuration: { lb_policy: "predicted_latency", lb_config: {
      serviceFQDN: "redis.static", servicePort: 6379, timeout: 500, sloExploration: 0, modelRidge: 1000000, debugHeader: "x-llmlb-debug", ...extra } },
    redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(pods) },
  });
  for (let i = 0; i < 12; i++) {
    await serve(h, postChat(h, CHAT_BODY, LOOSE).s, 20);
    await serve(h, postChat(h, longBody(1000), LOOSE).s, 120);
  }
  return h;
}
