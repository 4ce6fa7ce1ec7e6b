// Upstream answers for predicted_latency tests through the facade (host-test/facade/sse-answers.ts)
// with this suite's chat request.
import type { TestHost } from "../../host-test/facade/index.js";
import { finishSse, startSse, teachSse } from "../../host-test/facade/sse-answers.js";
import { CHAT_BODY, postChat } from "./harness.js";

export const start = startSse;
export const finish = finishSse;

/** Requests served one at a time, so every host has observations (TTFT 20 ms, TPOT 10 ms). */
export async function teach(h: TestHost, headers: Record<string, string> = {}): Promise<void> {
  await teachSse(h, () => postChat(h, CHAT_BODY, headers).s);
}
