// endpoint_metrics, scoring: weighted with prefixWeight: the request's prefix levels (the tree
// prefix_cache keeps) are read from Redis, a host that served the prefix scores higher, and the
// levels are pointed at the chosen host afterwards.
import { afterEach, beforeAll, expect, it } from "vitest";
import { Redis } from "ioredis";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { higressPrefixKeys, modelTag } from "../helpers/higress-prefix-keys.js";
import { A, B, CLUSTER, makeHost, metricsConfig, vllmBody } from "./harness.js";
import type { TestHost } from "../../host-test/facade/index.js";

const NS = `{llmlb:llm:${CLUSTER}}`;
const suite = useRedisSuite();
let server: RedisFixture;
let redis: Redis;
let h: TestHost | null = null;
beforeAll(() => { ({ server, redis } = suite); });
afterEach(async () => { h?.close(); h = null; await redis.flushall(); });

const conversation = (q: string) => [{ role: "system", content: "shared system prompt" }, { role: "user", content: q }];
/** The namespaced level keys of a conversation (blockBoundary: message, model "m"). */
const levelKeys = (messages: object[]) => higressPrefixKeys({ messages }, false, true)!.map((k) => `${NS}:p:${modelTag("m")}:${k}`);

function weighted(extra: Record<string, unknown> = {}) {
  return metricsConfig({ scoring: "weighted", prefixWeight: 3, serviceFQDN: "redis.static", servicePort: 6379, ...extra });
}

async function send(messages: object[]) {
  const s = h!.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route: "llm", headers: { "content-type": "application/json" } });
  s.sendRequestHeaders(false);
  s.sendRequestBody(JSON.stringify({ model: "m", messages }), true);
  await h!.redisIdle();
  return s;
}

it("a host that served the prefix wins among otherwise equal hosts, and the path is recorded", async () => {
  h = await makeHost(weighted(), [{ address: A, metrics: vllmBody(0, 2) }, { address: B, metrics: vllmBody(0, 2) }],
    { redis: { url: `redis://${server.host}:${server.port}` } });
  const keys = levelKeys(conversation("first"));
  await redis.set(keys[0], B); // B served the shared system prompt
  for (let i = 0; i < 6; i++) { // by chance alone: 1 in 64
    const s = await send(conversation(`question ${i}`));
    expect(s.overrideHost.requested).toBe(B);
    s.complete();
    await h.redisIdle();
  }
  // The new conversation's levels now point at B too.
  const second = levelKeys(conversation("question 0"));
  expect(await redis.get(second[1])).toBe(B);
  expect(await redis.ttl(second[1])).toBeGreaterThan(1000);
});

it("load still matters: a much busier host loses despite holding the prefix", async () => {
  h = await makeHost(weighted(), [{ address: A, metrics: vllmBody(0, 2) }, { address: B, metrics: vllmBody(20, 30, 0.95) }],
    { redis: { url: `redis://${server.host}:${server.port}` } });
  await redis.set(levelKeys(conversation("x"))[0], B);
  const s = await send(conversation("x"));
  expect(s.overrideHost.requested).toBe(A);
});

it("prefixWeight 0 reads nothing from the tree", async () => {
  h = await makeHost(weighted({ prefixWeight: 0 }), [{ address: A, metrics: vllmBody(0, 2) }, { address: B, metrics: vllmBody(0, 2) }],
    { redis: { url: `redis://${server.host}:${server.port}` } });
  await redis.config("RESETSTAT");
  await send(conversation("y"));
  expect(await redis.info("commandstats")).not.toMatch(/cmdstat_mget/);
  expect((await redis.keys("*:p:*")).length).toBe(0);
});
