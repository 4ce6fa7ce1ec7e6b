// The SLO benchmarks' wall-clock client (bench/slo/client.ts) against a simulated pod: it counts
// the tokens of a stream, not its SSE events, so TPOT = (last - first token) / (tokens - 1).
import http from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startSimFleet, type SimFleet } from "../../host-test/sim/fleet.js";
import { sloRequest } from "../../bench/slo/client.js";

let fleet: SimFleet | null = null;
afterEach(async () => {
  await fleet?.close();
  fleet = null;
});

describe("sloRequest", () => {
  it("counts the tokens of a chat stream, not vLLM's opening role chunk (empty content)", async () => {
    fleet = await startSimFleet(1, { profile: "tiny", timeScale: 4 });
    const agent = new http.Agent({ keepAlive: true });
    try {
      const body = { messages: [{ role: "user", content: "hello there" }], max_tokens: 5, ignore_eos: true, stream: true };
      const r = await sloRequest(`${fleet.pods[0].url}/v1/chat/completions`, body, {}, agent, 10_000);
      expect(r.status).toBe(200);
      expect(r.error).toBeNull();
      expect(r.tokens).toBe(5);
    } finally {
      agent.destroy();
    }
  });
});
