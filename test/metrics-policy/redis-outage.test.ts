// endpoint_metrics' in-flight counts through a Redis outage (a real server this file owns, stopped
// and started again). The counts are read through the saturation filter: one idle host, queueLimit
// 3, so a request is shed exactly when 3 are counted there; with n open, 3 - n more are served.
// While Redis is down each request holds a local lease: its pick must come off when it ends (the
// picks piled up: 3 requests served one after another, every later one shed) and count once while
// open (not in the tracker's counts and the local counts both); after Redis returns the counts
// stay exact.
import { afterEach, describe, expect, it } from "vitest";
import type { TestHost } from "../../host-test/facade/index.js";
import { untilBackOnRedis, useStoppableRedis } from "../helpers/redis-outage.js";
import { A, chat, makeHost, metricsConfig, picked, vllmBody } from "./harness.js";

const QUEUE_LIMIT = 3;

const redis = useStoppableRedis();
let h: TestHost | null = null;
afterEach(async () => {
  h?.close();
  h = null;
  await redis.restore();
});

type Stream = ReturnType<typeof chat>;

// While Redis is frozen nothing waits for its replies (they come when it thaws, or the calls
// time out in real time).
async function open(t: TestHost): Promise<Stream> {
  const s = chat(t);
  if (!redis.paused) await t.redisIdle();
  return s;
}

async function end(t: TestHost, s: Stream): Promise<void> {
  if (!s.localResponse) s.sendResponseHeaders({ ":status": "200" }, true);
  s.complete();
  if (!redis.paused) await t.redisIdle();
}

/** Requests sent one after another, each left open, until one is shed: how many were served
 *  (QUEUE_LIMIT minus what the host counted before); then they end. */
async function servedUntilShed(t: TestHost): Promise<number> {
  const served: Stream[] = [];
  for (;;) {
    const s = await open(t);
    if (s.localResponse) {
      expect(s.localResponse.status).toBe(429);
      await end(t, s);
      break;
    }
    expect(picked(s)).toBe(A);
    served.push(s);
    if (served.length > 2 * QUEUE_LIMIT) break;
  }
  for (const s of served) await end(t, s);
  return served.length;
}

const fallbacks = (t: TestHost) => t.metric("llmlb_picks_total", { policy: "endpoint_metrics", reason: "local_fallback" });

async function host(): Promise<TestHost> {
  return makeHost(metricsConfig({ serviceFQDN: "redis.static", servicePort: 6379, timeout: 200, keyPrefix: `emo${Date.now()}`,
    queueLimit: QUEUE_LIMIT, shedWhenSaturated: "normal", inflightRefreshMs: 200 }),
  [{ address: A, metrics: vllmBody(0, 0, 0.1) }], { redis: { url: redis.server.url } });
}

describe("endpoint_metrics in-flight counts through a Redis outage", () => {
  it("while Redis is down, an ended request leaves no count and an open one counts once", async () => {
    h = await host();
    expect(await servedUntilShed(h)).toBe(QUEUE_LIMIT);
    await redis.stop();
    for (let i = 0; i < 12; i++) {
      const s = await open(h);
      expect(s.localResponse).toBeNull();
      expect(picked(s)).toBe(A);
      h.advance(300); // the tracker's reads fail meanwhile
      await h.redisIdle();
      await end(h, s);
    }
    expect(fallbacks(h)).toBeGreaterThanOrEqual(12);
    expect(await servedUntilShed(h)).toBe(QUEUE_LIMIT);
    const held = [await open(h), await open(h)];
    expect(held.map((s) => picked(s))).toEqual([A, A]);
    h.advance(1000);
    await h.redisIdle();
    expect(await servedUntilShed(h)).toBe(QUEUE_LIMIT - 2);
    for (const s of held) await end(h, s);
    expect(await servedUntilShed(h)).toBe(QUEUE_LIMIT);
  });

  it("after Redis returns, the requests leased locally still count once and come off when they end", async () => {
    h = await host();
    await redis.stop();
    const held = [await open(h), await open(h)];
    expect(held.map((s) => picked(s))).toEqual([A, A]);
    expect(fallbacks(h)).toBe(2);
    expect(await servedUntilShed(h)).toBe(QUEUE_LIMIT - 2);
    await redis.start();
    await untilBackOnRedis(h);
    // Redis counts none of them (local leases); this gateway counts both, once.
    expect(await servedUntilShed(h)).toBe(QUEUE_LIMIT - 2);
    expect(fallbacks(h)).toBe(2 + QUEUE_LIMIT - 2);
    const viaRedis = await open(h);
    expect(viaRedis.localResponse).toBeNull();
    expect(await servedUntilShed(h)).toBe(QUEUE_LIMIT - 3);
    for (const s of held) await end(h, s);
    expect(await servedUntilShed(h)).toBe(QUEUE_LIMIT - 1);
    await end(h, viaRedis);
    h.advance(400); // a read after the last end: the counts are Redis's again
    await h.redisIdle();
    expect(await servedUntilShed(h)).toBe(QUEUE_LIMIT);
  });

  it("Redis frozen: picks that waited out the pick deadline leave no count, and none is left once it thaws", async () => {
    h = await host();
    expect(await servedUntilShed(h)).toBe(QUEUE_LIMIT);
    redis.freeze();
    for (let i = 0; i < 6; i++) {
      const s = chat(h);
      for (let k = 0; k < 6 && picked(s) === null && !s.localResponse; k++) h.advance(20); // the pick deadline (50 ms)
      expect(s.localResponse).toBeNull();
      expect(picked(s)).toBe(A);
      h.advance(150); // the tracker's reads go out and hang
      await end(h, s);
    }
    expect(fallbacks(h)).toBe(6);
    expect(h.metric("llmlb_redis_failures_total", { kind: "pick_deadline" })).toBeGreaterThanOrEqual(1);
    expect(await servedUntilShed(h)).toBe(QUEUE_LIMIT);
    await h.redisIdle(); // the calls out time out (timeout 200 ms, real time)
    h.advance(300);
    expect(await servedUntilShed(h)).toBe(QUEUE_LIMIT);
    redis.thaw();
    await untilBackOnRedis(h);
    expect(await servedUntilShed(h)).toBe(QUEUE_LIMIT);
  });
});
