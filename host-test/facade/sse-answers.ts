// Streamed (SSE) upstream answers played by hand through the facade, as vLLM sends them: headers
// and a first token, then the rest and [DONE]. Used where the plugin must learn from responses
// (predicted_latency: TTFT from the first chunk, TPOT from the SSE events): tests and benches.
import type { TestHost } from "./test-host.js";
import type { TestStream } from "./test-stream.js";

const CHUNK = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\n';

/** The upstream starts streaming: headers and a first token. */
export function startSse(s: TestStream): void {
  s.sendResponseHeaders({ ":status": "200", "content-type": "text/event-stream" });
  s.sendResponseBody(CHUNK, false);
}

/** The upstream finishes the stream: one more token, [DONE], the end. */
export function finishSse(s: TestStream): void {
  s.sendResponseBody(CHUNK, false);
  s.sendResponseBody("data: [DONE]\n\n", true);
  s.complete();
}

/** `rounds` requests (made by `post`) served one at a time: TTFT 20 ms, TPOT 10 ms on whichever host each went to. */
export async function teachSse(h: TestHost, post: () => TestStream, rounds = 8): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    const s = post();
    await h.redisIdle();
    h.advance(20);
    startSse(s);
    h.advance(10);
    finishSse(s);
    await h.redisIdle();
  }
}
