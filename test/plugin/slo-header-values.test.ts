// predicted_latency's SLO headers (x-slo-ttft-ms / x-slo-tpot-ms) hold a plain number of ms; a
// value that is not one (a unit, a digit separator, trailing text) is no SLO the client asked
// for and the route's default applies. The number's head alone was taken before: "1s" became a
// 1 ms TTFT SLO that no pod meets, and a low-priority request got a 429. Host facade, real Redis.
import { describe, expect, it } from "vitest";
import { CHAT_BODY, postChat, useRedisHost } from "./harness.js";
import { taughtHost } from "./slo-prompts.js";

const t = useRedisHost();

/** One low-priority request with `value` as its TTFT SLO: 429 (shed) or the pod it went to. */
async function outcome(h: Awaited<ReturnType<typeof taughtHost>>, header: string, value: string): Promise<string> {
  const { s } = postChat(h, CHAT_BODY, { [header]: value, "x-llm-priority": "low" });
  await h.redisIdle();
  const out = s.localResponse !== null ? `${s.localResponse.status} retry-after=${s.localResponse.headers["retry-after"]}` : s.forwarded?.upstream.address ?? "none";
  s.complete();
  await h.redisIdle();
  return out;
}

describe("SLO header values that are not a number of ms", () => {
  it("a unit or trailing text falls back to the route's SLO (met: routed), a real 0.001 ms SLO sheds", async () => {
    // Route defaults every pod meets (taught: 20 ms to the first token, 10 ms per token).
    const h = await taughtHost(t, { sloTtftMs: 5000, sloTpotMs: 1000 });
    for (const v of ["1s", "1_000", "2e", "5 ms", "0x10", "1.5.2", "Infinity", "-3", "0"]) {
      expect(await outcome(h, "x-slo-ttft-ms", v), `ttft ${v}`).toMatch(/^10\.0\.0\.\d:8000$/);
      expect(await outcome(h, "x-slo-tpot-ms", v), `tpot ${v}`).toMatch(/^10\.0\.0\.\d:8000$/);
    }
    expect(await outcome(h, "x-slo-ttft-ms", "0.001")).toBe("429 retry-after=1");
    expect(await outcome(h, "x-slo-tpot-ms", "1e-3")).toBe("429 retry-after=1");
    expect(await outcome(h, "x-slo-ttft-ms", "4000")).toMatch(/^10\.0\.0\.\d:8000$/);
  });
});
