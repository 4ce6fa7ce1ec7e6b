// predicted_latency's shared model hash at scale: it forgets hosts no gateway observed for an hour
// (lua/model.lua; pods come and go with new addresses), and each VM's copy, read from the hash every
// modelRefreshMs, forgets them at its next read; a large hash is read less often (a byte budget).
// Through the host facade with a real Redis.
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

  it("reads a large hash less often than modelRefreshMs: at most 256 KiB a second per VM", async () => {
    const h = await taughtHost(t, {});
    const ns = "{llmlb:llm:outbound|8000||vllm.static}";
    // 2,000 more hosts' fields, ~400 bytes a host: ~800 KB a read.
    const b = Array.from({ length: 16 }, (_, i) => (1234.5678901 + i).toString()).join(" ");
    const p = Array.from({ length: 7 }, (_, i) => (123.4567891 + i).toString()).join(" ");
    const fields: string[] = [];
    for (let i = 0; i < 2000; i++) fields.push(`10.9.${i >> 8}.${i & 255}:8000|b`, b, `10.9.${i >> 8}.${i & 255}:8000|p`, p);
    await t.client.hset(`${ns}:lat`, ...fields);
    const reads = async () => {
      const info = String(await t.client.call("INFO", "commandstats"));
      return Number(/cmdstat_hgetall:calls=(\d+)/.exec(info)?.[1] ?? 0);
    };
    const before = await reads();
    // 10 s of requests every 100 ms: at modelRefreshMs (500) that would be 20 reads.
    for (let i = 0; i < 100; i++) {
      const { s } = postChat(h, longBody(100), LOOSE);
      await h.redisIdle();
      s.complete();
      h.advance(100);
    }
    const n = (await reads()) - before;
    expect(n).toBeGreaterThanOrEqual(2);
    expect(n).toBeLessThanOrEqual(5); // ~3.2 s apart
  });
});
