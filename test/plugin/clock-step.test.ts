// Envoy's proxy_get_current_time is the system clock, which can step backwards (NTP, a VM resume);
// its timers run on the monotonic clock and keep firing. The plugin once measured every interval
// on the wall clock, so after a step back of an hour the full tick never ran: leases went
// unrenewed and Redis expired them while their streams ran. The host steps the wall clock alone
// (TestHost.stepWallClock); the plugin reads a clock that ignores backward steps.
import { describe, expect, it } from "vitest";
import { glrConfig, host, postChat, useRedisHost, advanceWithIo } from "./harness.js";

const t = useRedisHost();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the system clock stepping backwards", () => {
  it("an hour back: open streams still renew their leases, so the count stays", async () => {
    const h = t.host = await host({ configuration: glrConfig({ leaseTTL: 2 }), redis: { url: t.redis.url } });
    const loads = async () => {
      const keys = await t.client.keys("*:load");
      const flat = keys.length ? await t.client.zrange(keys[0], 0, -1, "WITHSCORES") : [];
      return flat.filter((_, i) => i % 2 === 1).reduce((a, b) => a + Number(b), 0);
    };
    const { s } = postChat(h);
    await h.redisIdle();
    expect(await loads()).toBe(1);
    h.stepWallClock(-3_600_000);
    for (let i = 0; i < 6; i++) {
      await sleep(500); // the lease's TTL runs on Redis's clock
      h.advance(700); // ticks renew at a third of the TTL
      await h.redisIdle();
    }
    await advanceWithIo(h, 6000); // reconcile runs: a lease not renewed would be gone
    expect(await loads()).toBe(1);
    s.complete();
    await h.redisIdle();
    expect(await loads()).toBe(0);
  }, 30_000);
});
