// The healer (lua/reconcile.lua) of an idle pool backs off: a VM whose calls find nothing to
// settle or collect waits twice as long before the next, up to 8 s, instead of one call per
// 500 ms tick per pool per VM for ever; a call that finds work brings it back to every tick.
import { afterEach, expect, it } from "vitest";
import { CLUSTER, acquireOk, glrConfig, host, hosts, postChat } from "./harness.js";
import type { TestHost } from "../../host-test/facade/index.js";

let h: TestHost | null = null;
afterEach(() => { h?.close(); h = null; });

const OK = (addr: string) => acquireOk(addr, 0);

/** Answers every call (reconcile with `heal`) for `ms`, in 50 ms steps; returns the reconcile calls made. */
function run(t: TestHost, ms: number, heal: string): number {
  const before = t.redisHistory.filter((c) => c.text.includes("reconcile")).length;
  for (let i = 0; i < ms / 50; i++) {
    for (const c of [...t.redisCalls]) {
      if (c.settled) continue;
      if (c.text.includes("reconcile")) c.reply(heal);
      else if (c.text.includes("TIME")) c.reply(`*2\r\n$10\r\n${Math.floor(Date.now() / 1000)}\r\n$1\r\n0\r\n`);
      else if (c.text.includes("acquire")) c.reply(OK(hosts(2)[0].address));
      else c.reply(":1\r\n");
    }
    t.advance(50);
  }
  return t.redisHistory.filter((c) => c.text.includes("reconcile")).length - before;
}

it("an idle pool's healer backs off to one call per 8 s; one that finds work runs every tick again", async () => {
  h = await host({ configuration: glrConfig({ timeout: 3000 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
  const { s } = postChat(h);
  run(h, 100, "*3\r\n:0\r\n:0\r\n:0\r\n");
  s.sendResponseHeaders({ ":status": "200" }, true);
  s.complete();
  run(h, 20_000, "*3\r\n:0\r\n:0\r\n:0\r\n"); // backing off: 1, 2, 4, 8 s
  const idle = run(h, 40_000, "*3\r\n:0\r\n:0\r\n:0\r\n");
  expect(idle).toBeGreaterThanOrEqual(4); // one per 8 s
  expect(idle).toBeLessThanOrEqual(6); // not 80 (one per 500 ms tick)
  run(h, 8_500, "*3\r\n:3\r\n:0\r\n:0\r\n"); // a call finds dead leases to settle...
  expect(run(h, 5_000, "*3\r\n:1\r\n:0\r\n:0\r\n")).toBeGreaterThanOrEqual(9); // ...every tick again
});
