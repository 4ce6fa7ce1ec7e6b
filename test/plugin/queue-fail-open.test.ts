// Gateway-side queueing: a request that goes on without Redis's admission (fail open) runs all the
// same, so once Redis knows of it, its id must hold a slot at once. An enter Redis answers after
// the pick deadline: when that late answer says the entry was queued, the id must take a slot,
// not a place in line. Before, the entry stayed queued:
// it stood at the head of the queue, an exit then handed the freed slot to it (a grant its gateway
// never claimed), and once the grant lapsed (queueEntryTtlMs) a newcomer was admitted while it still
// ran: more streams than queueCapacity. Host facade, real Redis.
import { describe, expect, it } from "vitest";
import type { TestHost } from "../../host-test/facade/index.js";
import { CLUSTER, advanceWithIo, glrConfig, host, hosts, postChat, useRedisHost } from "./harness.js";

const NS = `{llmlb:llm:${CLUSTER}}`;

/** Ticks of 20 ms, each after 20 ms of real time (Redis's clock), for about `ms` of it. */
async function pollInRealTime(h: TestHost, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 20) {
    await new Promise((r) => setTimeout(r, 20));
    await advanceWithIo(h, 20, 20);
  }
}
const t = useRedisHost();

describe("a late enter answer for a request already running", () => {
  it("takes a slot at once: a newcomer waits until the streams over capacity ended", async () => {
    const h = t.host = await host({
      configuration: glrConfig({ queueCapacity: 1, pickDeadlineMs: 20, timeout: 3000, queuePollMs: 20, queueEntryTtlMs: 100, queueMaxWaitMs: 60000 }),
      redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(2) },
    });
    const a = postChat(h).s;
    await h.redisIdle();
    expect(a.forwarded).not.toBeNull();
    const b = postChat(h).s;
    h.advance(25); // b's enter is not answered within the pick deadline: b goes on (fail open)
    await h.redisIdle();
    expect(b.forwarded).not.toBeNull();
    // Redis queued b behind a; b runs: it holds a slot.
    expect(await t.client.zcard(`${NS}:q`)).toBe(0);
    expect(await t.client.zcard(`${NS}:adm`)).toBe(2);
    const c = postChat(h).s;
    await advanceWithIo(h, 200, 20);
    expect(c.forwarded).toBeNull();
    a.sendResponseHeaders({ ":status": "200" }, true);
    a.complete();
    // Redis's clock is the real one: c polls on while it passes b's grant (queueEntryTtlMs) had it been one.
    await pollInRealTime(h, 300);
    expect(c.forwarded).toBeNull(); // b still runs: capacity 1
    b.sendResponseHeaders({ ":status": "200" }, true);
    b.complete();
    await advanceWithIo(h, 100, 20);
    expect(c.forwarded).not.toBeNull();
    expect(c.localResponse).toBeNull();
  });

  it("a waiting entry found gone (expired: its polls came late) goes on holding a slot", async () => {
    const h = t.host = await host({
      configuration: glrConfig({ queueCapacity: 1, timeout: 3000, queuePollMs: 20, queueEntryTtlMs: 100, queueMaxWaitMs: 60000 }),
      redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(2) },
    });
    const a = postChat(h).s;
    await h.redisIdle();
    const b = postChat(h).s;
    await advanceWithIo(h, 40, 20);
    expect(b.forwarded).toBeNull();
    await new Promise((r) => setTimeout(r, 250)); // no poll for longer than queueEntryTtlMs (Redis's clock)
    await advanceWithIo(h, 40, 20); // b's poll: GONE, b goes on (fail open)
    expect(b.forwarded).not.toBeNull();
    expect(await t.client.zcard(`${NS}:adm`)).toBe(2);
    const c = postChat(h).s;
    await advanceWithIo(h, 40, 20);
    a.sendResponseHeaders({ ":status": "200" }, true);
    a.complete();
    await pollInRealTime(h, 200);
    expect(c.forwarded).toBeNull(); // b still runs: capacity 1
    b.sendResponseHeaders({ ":status": "200" }, true);
    b.complete();
    await advanceWithIo(h, 100, 20);
    expect(c.forwarded).not.toBeNull();
  });
});
