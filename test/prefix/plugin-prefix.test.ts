// prefix_cache through the built plugin (host facade + real Redis): a conversation's next turn
// returns to its host, the keys in Redis are the namespaced or Higress (compat) ones computed
// independently, and bodies without usable blocks still get a least-request pick.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { higressPrefixKeys, modelTag } from "../helpers/higress-prefix-keys.js";
import { CLUSTER, host, postChat } from "../plugin/harness.js";
import type { TestHost } from "../../host-test/facade/index.js";

const NS = `{llmlb:llm:${CLUSTER}}`;
const DEBUG = "x-llmlb-debug";
let redis: RedisFixture;
let client: Redis;
let h: TestHost | null = null;

function prefixConfig(extra: Record<string, unknown> = {}): object {
  return { lb_policy: "prefix_cache", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 500, debugHeader: DEBUG, ...extra } };
}

/** Sends one chat request, waits for Redis, answers 200 and returns the host and the debug header. */
async function turn(t: TestHost, messages: unknown[]): Promise<{ host: string; debug: string }> {
  const { s } = postChat(t, JSON.stringify({ model: "m", messages }));
  await t.redisIdle();
  expect(s.forwarded).not.toBeNull();
  s.sendResponseHeaders({ ":status": "200" }, true);
  return { host: s.forwarded!.upstream.address!, debug: s.response.headers[DEBUG] ?? "" };
}

const suite = useRedisSuite();
beforeAll(() => { redis = suite.server; client = suite.redis; });
afterEach(async () => { h?.close(); h = null; await client.flushall(); });

const TURN1 = [{ role: "system", content: "You are terse." }, { role: "user", content: "Name a prime." }];
const TURN2 = [...TURN1, { role: "assistant", content: "7" }, { role: "user", content: "Another?" }];

describe("prefix_cache in the plugin", () => {
  it("sends the next turn of a conversation to the host that served the previous one", async () => {
    h = await host({ configuration: prefixConfig(), redis: { url: redis.url } });
    const first = await turn(h, TURN1);
    expect(first.debug).toContain("reason=prefix_miss");
    // Outside compat mode blocks close after every message (blockBoundary: message).
    const keys = higressPrefixKeys({ messages: TURN2 }, false, true)!;
    expect(await client.get(`${NS}:p:${modelTag("m")}:${keys[0]}`)).toBe(first.host);
    const second = await turn(h, TURN2);
    expect(second.host).toBe(first.host);
    expect(second.debug).toContain("reason=prefix_hit");
    expect(await client.get(`${NS}:p:${modelTag("m")}:${keys[1]}`)).toBe(first.host);
  });

  it("conversations sharing a system prompt meet on one host (its own level), unlike Higress's blocks", async () => {
    h = await host({ configuration: prefixConfig(), redis: { url: redis.url } });
    const system = { role: "system", content: "A long shared system prompt." };
    const a = await turn(h, [system, { role: "user", content: "first user" }]);
    const b = await turn(h, [system, { role: "user", content: "second user" }]);
    expect(b.host).toBe(a.host);
    expect(b.debug).toContain("reason=prefix_hit");
    h.close();
    await client.flushall();
    h = await host({ configuration: prefixConfig({ compat: true }), redis: { url: redis.url } });
    await turn(h, [system, { role: "user", content: "first user" }]);
    const c = await turn(h, [system, { role: "user", content: "second user" }]);
    expect(c.debug).toContain("reason=prefix_miss");
  });

  it("compat mode writes Higress's bare keys", async () => {
    h = await host({ configuration: prefixConfig({ compat: true, redisKeyTTL: 120 }), redis: { url: redis.url } });
    const first = await turn(h, TURN1);
    const [level1] = higressPrefixKeys({ messages: TURN1 })!;
    expect(await client.get(level1)).toBe(first.host);
    const ttl = await client.ttl(level1);
    expect(ttl).toBeGreaterThan(100);
    expect(ttl).toBeLessThanOrEqual(120);
  });

  it("a body without usable blocks still gets a least-request pick", async () => {
    h = await host({ configuration: prefixConfig(), redis: { url: redis.url } });
    const { s } = postChat(h, JSON.stringify({ model: "m", messages: [{ role: "user" }] }));
    await h.redisIdle();
    expect(s.forwarded!.upstream.via).toBe("override");
    const { s: notJson } = postChat(h, "not json at all");
    await h.redisIdle();
    expect(notJson.forwarded!.upstream.via).toBe("override");
    expect((await client.keys("*:p:*")).length).toBe(0);
  });

  it("a 100 KB model name never reaches a Redis key name (hashed to 16 hex digits)", async () => {
    h = await host({ configuration: prefixConfig(), redis: { url: redis.url } });
    const model = "m".repeat(100_000);
    const { s } = postChat(h, JSON.stringify({ model, messages: TURN2 }));
    await h.redisIdle();
    expect(s.forwarded!.upstream.via).toBe("override");
    const keys = await client.keys("*");
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) expect(k.length).toBeLessThan(200);
    const level1 = higressPrefixKeys({ messages: TURN2 }, false, true)![0];
    expect(await client.get(`${NS}:p:${modelTag(model)}:${level1}`)).toBe(s.forwarded!.upstream.address);
  });

  it("compat mode writes every level Higress writes (no 64-level cap) and none for a completions body", async () => {
    h = await host({ configuration: prefixConfig({ compat: true, maxPrefixLevels: 64 }), redis: { url: redis.url } });
    const messages = Array.from({ length: 70 }, (_, i) => ({ role: "user", content: `turn ${i}` }));
    const first = await turn(h, messages);
    const levels = higressPrefixKeys({ messages })!;
    expect(levels.length).toBe(70);
    expect(await client.get(levels[69])).toBe(first.host);
    await client.flushall();
    const { s } = postChat(h, JSON.stringify({ model: "m", prompt: "Once upon a time" }));
    await h.redisIdle();
    expect(s.forwarded).not.toBeNull();
    // Only lease bookkeeping, no 40-hex prefix key: Higress reads `messages` only.
    expect((await client.keys("*")).filter((k) => /^[0-9A-F]{40}$/.test(k))).toEqual([]);
  });
});
