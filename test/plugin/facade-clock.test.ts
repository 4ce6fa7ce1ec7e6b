// The facade's manual clock against a real Redis's clock (host-test/README.md "The facade's clock
// and Redis's"): the plugin sends a pick's deadline to Redis as an absolute Redis time, from the
// offset between the two clocks it last measured. The manual clock stands still while the test
// awaits, Redis's does not: wall time that passes without advance() moves the deadline into
// Redis's past, and the pick is refused LATE and falls back (stricter than Envoy, whose clock
// runs, never kinder). This pins that explanation of fallbacks seen under CPU stress, and that
// the LATE reply's time puts the offset right again.
import { describe, expect, it } from "vitest";
import { host, glrConfig, postChat, useRedisHost } from "./harness.js";
import type { TestHost } from "../../host-test/facade/index.js";

const t = useRedisHost();
const picks = (h: TestHost, reason: string) => h.metric("llmlb_picks_total", { policy: "global_least_request", reason });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function pick(h: TestHost): Promise<void> {
  const { s } = postChat(h);
  await h.redisIdle();
  expect(s.forwarded).not.toBeNull();
}

describe("the facade's manual clock and a real Redis's clock", () => {
  it("wall time not advanced past the pick deadline makes the pick LATE (fallback); the reply's time mends the offset", async () => {
    const h = (t.host = await host({ configuration: glrConfig({ timeout: 5000, pickDeadlineMs: 500 }), redis: { url: t.redis.url } }));
    await pick(h); // no deadline yet: the clock offset is not known
    h.advance(500); // the tick probes Redis's TIME: the offset is known from here
    await h.redisIdle();
    await pick(h);
    expect(picks(h, "local_fallback")).toBe(0);
    await sleep(800); // Redis's clock moves 800 ms, the facade's none: the deadline is 300 ms past
    await pick(h);
    expect(picks(h, "local_fallback")).toBe(1);
    await pick(h); // the LATE reply carried Redis's time: the offset is right again
    expect(picks(h, "local_fallback")).toBe(1);
  });

  it("advancing the manual clock with the wall time keeps the deadline ahead", async () => {
    const h = (t.host = await host({ configuration: glrConfig({ timeout: 5000, pickDeadlineMs: 500 }), redis: { url: t.redis.url } }));
    await pick(h);
    h.advance(500);
    await h.redisIdle();
    const began = Date.now();
    await sleep(300);
    h.advance(Date.now() - began);
    await pick(h);
    expect(picks(h, "local_fallback")).toBe(0);
  });
});
