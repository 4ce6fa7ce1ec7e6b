// Upstream answers for predicted_latency tests through the facade: a streamed (SSE) response
// started and finished by hand, and a teaching round that gives every host observations.
import type { TestHost, TestStream } from "../../host-test/facade/index.js";
import { CHAT_BODY, postChat } from "./harness.js";

const CHUNK = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\n';

/** The upstream starts streaming: headers and a first token. */
export function start(s: TestStream): void {
  s.sendResponseHeaders({ ":status": "200", "content-type": "text/event-stream" });
  s.sendResponseBody(CHUNK, false);
}

/** The upstream finishes the stream. */
export function finish(s: TestStream): void {
  s.sendResponseBody(CHUNK, false);
  s.sendResponseBody("data: [DONE]\n\n", true);
  s.complete();
}

/** Requests served one at a time, so every host has observations (TTFT 20 ms, TPOT 10 ms). */
export async function teach(h: TestHost, headers: Record<string, string> = {}): Promise<void> {
  for (let i = 0; i < 8; i++) {
    const { s } = postChat(h, CHAT_BODY, headers);
    await h.redisIdle();
    h.advance(20);
    start(s);
    h.advance(10);
    finish(s);
    await h.redisIdle();
  }
}
