// The plugin on the strict host (host-test/README.md fidelity table): the body read right under
// both Envoy body views (row 5), and a neighbour plugin sharing the worker's Redis client (row 3)
// never losing a call in flight to this plugin's retries.
import { beforeAll, describe, expect, it } from "vitest";
import { CLUSTER, REDIS_CLUSTER, WASM, glrConfig, hosts } from "./harness.js";
import { TestHost } from "../../host-test/facade/index.js";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { buildGuest } from "../host/guests/build.js";

const suite = useRedisSuite();
let redis: RedisFixture;
let higress: string;
beforeAll(async () => { redis = suite.server; higress = await buildGuest("higress-100"); });

const prefixConfig = { lb_policy: "prefix_cache", lb_config: { serviceFQDN: "redis.static", servicePort: 6379 } };
const body = JSON.stringify({ model: "m", messages: [{ role: "system", content: "s".repeat(50_000) }, { role: "user", content: "the last words" }] });

/** The prefix keys (`...:p:<model tag>:<sha1>`) of the first Redis query the plugin sends for `body` cut into `parts` chunks. */
async function firstQuery(bodyView: "1.32" | "pre-1.32", parts: number): Promise<string> {
  const h = await TestHost.create({ wasm: WASM, configuration: prefixConfig, clusters: { [CLUSTER]: hosts(3) }, redisClusters: [REDIS_CLUSTER], profile: { bodyView } });
  const s = h.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route: "llm", headers: { "content-type": "application/json" } });
  s.sendRequestHeaders(false);
  const step = Math.ceil(body.length / parts);
  for (let at = 0; at < body.length; at += step) s.sendRequestBody(body.slice(at, at + step), at + step >= body.length);
  expect(s.localResponse).toBeNull();
  expect(h.redisCalls).toHaveLength(1);
  return (h.redisCalls[0].text.match(/:p:[0-9a-f]{16}:[0-9A-F]{40}/g) ?? []).join(" ");
}

describe("body views", () => {
  it("a body in many chunks is read whole with and without the current chunk in the view, past 32 KiB", async () => {
    const whole = await firstQuery("1.32", 1);
    expect(whole.split(" ")).toHaveLength(2); // the system and the user message levels
    expect(await firstQuery("1.32", 7)).toBe(whole);
    expect(await firstQuery("pre-1.32", 7)).toBe(whole);
  });
});

describe("a neighbour plugin on the same Redis cluster", () => {
  it("this plugin's failed call is not followed by a re-init that would fail the neighbour's call in flight", async () => {
    const lb = await TestHost.create({ wasm: WASM, configuration: glrConfig(), clusters: { [CLUSTER]: hosts(2) }, redisClusters: [REDIS_CLUSTER], redis: { url: redis.url } });
    try {
      const neighbour = await lb.addPlugin({ wasm: higress, configuration: `redis=${REDIS_CLUSTER}`, clusters: { [CLUSTER]: hosts(2) } });
      const closesAfterStart = lb.backend.redisReinitCloses;
      // A call refused by the host (no Redis host for a moment): the plugin falls back.
      lb.backend.redisNoHost.add(REDIS_CLUSTER);
      const refused = lb.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route: "llm" });
      refused.sendRequestHeaders(false);
      refused.sendRequestBody('{"model":"m"}', true);
      expect(refused.forwarded?.ended).toBe(true);
      lb.backend.redisNoHost.delete(REDIS_CLUSTER);
      // The neighbour's call in flight; then, past any retry delay, this plugin's next request.
      const blocked = neighbour.stream({ headers: { "x-redis-cmd": "BLPOP never-filled 0.3" } });
      blocked.sendRequestHeaders(true);
      lb.advance(5000);
      const next = lb.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route: "llm" });
      next.sendRequestHeaders(false);
      next.sendRequestBody('{"model":"m"}', true);
      await lb.redisIdle();
      expect(next.forwarded?.ended).toBe(true);
      expect(lb.backend.redisReinitCloses).toBe(closesAfterStart);
      // BLPOP timed out normally (nil, status 0) instead of failing with the connection.
      expect(neighbour.logMessages().find((m) => m.startsWith("redis_reply"))).toMatch(/status=0 size=5 reply=\*-1\|$/);
    } finally {
      lb.close();
    }
  });
});
