// predicted_latency's in-flight counts through a Redis outage (a real server this file owns,
// stopped and started again), on one pod with maxRequestCount 4: with n requests open there, 4 - n
// more are served before one is shed ("limit"); a pick through Redis also says what it counted
// (q in its debug reason). While Redis is down each request holds a local lease: its pick must come
// off when it ends (the picks piled up: 4 requests served one after another, every later one shed)
// and count once while open; after Redis returns the counts stay exact.
import { afterEach, describe, expect, it } from "vitest";
import type { TestHost, TestStream } from "../../host-test/facade/index.js";
import { untilBackOnRedis, useStoppableRedis } from "../helpers/redis-outage.js";
import { CLUSTER, host, hosts, postChat } from "../plugin/harness.js";

const LIMIT = 4;
const POD = "10.0.0.1:8000";

const redis = useStoppableRedis();
let h: TestHost | null = null;
afterEach(async () => {
  h?.close();
  h = null;
  await redis.restore(); // a test that failed during its outage
});

async function plHost(): Promise<TestHost> {
  return host({
    configuration: { lb_policy: "predicted_latency", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 200,
      keyPrefix: `plo${Date.now()}`, maxRequestCount: LIMIT, inflightRefreshMs: 200, debugHeader: "x-llmlb-debug" } },
    redis: { url: redis.server.url }, clusters: { [CLUSTER]: hosts(1) },
  });
}

/** A request sent and answered (headers only, the stream left open): what it counted in flight
 *  (q), "local" (a local lease: its reason says only local_fallback), or "shed". */
async function open(t: TestHost): Promise<{ s: TestStream; q: number | "local" | "shed" }> {
  const { s } = postChat(t);
  await t.redisIdle();
  if (s.localResponse) return { s, q: "shed" };
  expect(s.forwarded?.upstream.address).toBe(POD);
  s.sendResponseHeaders({ ":status": "200" }, false);
  const debug = s.response.headers["x-llmlb-debug"] ?? "";
  if (debug.includes("reason=local_fallback")) return { s, q: "local" };
  const m = /:q=([\d.]+)/.exec(debug);
  expect(m, debug).not.toBeNull();
  return { s, q: Number(m![1]) };
}

async function end(t: TestHost, s: TestStream): Promise<void> {
  if (!s.localResponse) s.sendResponseBody("", true);
  s.complete();
  await t.redisIdle();
}

/** Requests left open until one is shed: the q of each served one, then they all end. */
async function qsUntilShed(t: TestHost): Promise<(number | "local")[]> {
  const served: { s: TestStream; q: number | "local" | "shed" }[] = [];
  for (let i = 0; i <= 2 * LIMIT; i++) {
    const r = await open(t);
    if (r.q === "shed") {
      expect(r.s.localResponse!.status).toBe(429);
      await end(t, r.s);
      break;
    }
    served.push(r);
  }
  for (const r of served) await end(t, r.s);
  return served.map((r) => r.q as number | "local");
}

const fallbacks = (t: TestHost) => t.metric("llmlb_picks_total", { policy: "predicted_latency", reason: "local_fallback" });

describe("predicted_latency in-flight counts through a Redis outage", () => {
  it("while Redis is down, an ended request leaves no count and an open one counts once", async () => {
    h = await plHost();
    expect(await qsUntilShed(h)).toEqual([0, 1, 2, 3]);
    await redis.stop();
    const qs: (number | "local" | "shed")[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await open(h);
      qs.push(r.q);
      h.advance(300); // the tracker's reads fail meanwhile
      await h.redisIdle();
      await end(h, r.s);
    }
    expect(qs).toEqual(Array(12).fill("local"));
    expect(fallbacks(h)).toBe(12);
    const local4 = ["local", "local", "local", "local"];
    expect(await qsUntilShed(h)).toEqual(local4);
    const held = [await open(h), await open(h)];
    h.advance(1000);
    await h.redisIdle();
    expect(await qsUntilShed(h)).toEqual(["local", "local"]);
    for (const r of held) await end(h, r.s);
    expect(await qsUntilShed(h)).toEqual(local4);
  });

  it("after Redis returns, the requests leased locally still count once and come off when they end", async () => {
    h = await plHost();
    await redis.stop();
    const held = [await open(h), await open(h)];
    expect(held.map((r) => r.q)).toEqual(["local", "local"]);
    expect(await qsUntilShed(h)).toEqual(["local", "local"]);
    await redis.start();
    await untilBackOnRedis(h);
    const before = fallbacks(h);
    // Redis counts neither (local leases); this gateway counts both, once.
    expect(await qsUntilShed(h)).toEqual([2, 3]);
    const viaRedis = await open(h);
    expect(viaRedis.q).toBe(2);
    expect(fallbacks(h)).toBe(before);
    for (const r of held) await end(h, r.s);
    expect(await qsUntilShed(h)).toEqual([1, 2, 3]);
    await end(h, viaRedis.s);
    h.advance(400); // a read after the last end: the counts are Redis's again
    await h.redisIdle();
    expect(await qsUntilShed(h)).toEqual([0, 1, 2, 3]);
  });
});
