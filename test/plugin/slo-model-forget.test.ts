// predicted_latency's shared model hash forgets hosts no gateway observed for an hour
// (lua/model.lua; pods come and go with new addresses): each VM's copy, read from the hash every
// modelRefreshMs, forgets them at its next read. Through the host facade with a real Redis.
import { describe, expect, it } from "vitest";
import { postChat, useRedisHost } from "./harness.js";
import { start } from "./slo-streams.js";
import { LOOSE, longBody, taughtHost } from "./slo-prompts.js";

const t = useRedisHost();

describe("the model hash's hosts", () => {
  it("a VM forgets what the fleet's hash no longer holds (model.lua forgets hosts idle for an hour)", async () => {
    const h = await taughtHost(t, {});
    const ns = "{llmlb:llm:outbound|8000||vllm.static}";
    const before = postChat(h, longBody(1000), LOOSE).s;
    await h.redisIdle();
    h.advance(10);
    start(before);
    expect(String(before.response.headers["x-llmlb-debug"])).toMatch(/:ttft=[\d.]+/);
    // What model.lua does to hosts no one observed for an hour, done at once.
    expect(await t.client.zcard(`${ns}:lat:at`)).toBe(2);
    await t.client.del(`${ns}:lat`);
    h.advance(600); // past modelRefreshMs: the next pick reads the hash again
    await h.redisIdle();
    const after = postChat(h, longBody(1000), LOOSE).s;
    await h.redisIdle();
    h.advance(10);
    start(after);
    expect(String(after.response.headers["x-llmlb-debug"])).toContain("no_model");
  });
});
