// The pick deadline (lb_config.pickDeadlineMs; issue 11 item 2) through the host facade with a
// recorded Redis: a pick Redis does not answer goes on by the local fallback within the deadline
// plus one short tick, the tick period is short only while a pick waits, a reply arriving later
// is released, and deadline misses open the breaker.
import { afterEach, describe, expect, it } from "vitest";
import { CLUSTER, acquireOk, glrConfig, host, hosts, postChat } from "./harness.js";
import type { TestHost } from "../../host-test/facade/index.js";
import type { RecordedRedisCall } from "../../host-test/facade/callouts.js";
import { isScriptQuery, scriptOf } from "../helpers/script-calls.js";
import { parseReply } from "../../host-test/resp.js";

const NS = `{llmlb:llm:${CLUSTER}}`;
let h: TestHost | null = null;
afterEach(() => { h?.close(); h = null; });

const fallbacks = (t: TestHost) => t.metric("llmlb_picks_total", { policy: "global_least_request", reason: "local_fallback" });
const misses = (t: TestHost) => t.metric("llmlb_redis_failures_total", { kind: "pick_deadline" });
const leaseIdOf = (text: string) => /\r\n\$\d+\r\n([^\r]+:[0-9a-z]+)\r\n/.exec(text.split(NS + ":seen")[1])![1];
const tickOf = (t: TestHost) => (t.plugin.vms[0].root as unknown as { tickPeriodMs: number }).tickPeriodMs;
const OK = (addr: string) => acquireOk(addr, 1);

describe("pick deadline", () => {
  it("a pick Redis never answers is forwarded by the fallback within the deadline + one tick (pickDeadlineMs / 5)", async () => {
    h = await host({ configuration: glrConfig({ pickDeadlineMs: 20, timeout: 3000 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const { s } = postChat(h);
    expect(h.redisCalls.length).toBe(1);
    h.advance(19);
    expect(s.forwarded).toBeNull(); // still waiting for Redis
    h.advance(5); // the short tick (4 ms) after the deadline
    expect(s.forwarded!.upstream.via).toBe("override");
    expect(fallbacks(h)).toBe(1);
    expect(misses(h)).toBe(1);
  });

  it("pickDeadlineMs above the Redis timeout: a pick waits the timeout, measured by the plugin, and the short tick is a fifth of that", async () => {
    h = await host({ configuration: glrConfig({ pickDeadlineMs: 2000, timeout: 500 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const { s } = postChat(h);
    expect(tickOf(h)).toBe(100);
    h.advance(499);
    expect(s.forwarded).toBeNull();
    h.advance(101);
    expect(s.forwarded!.upstream.via).toBe("override"); // by the fallback, within the wait + a fifth
  });

  it("without a pick waiting the tick is back at 500 ms after the next short tick: a deadline is noticed only by short ticks", async () => {
    h = await host({ configuration: glrConfig({ pickDeadlineMs: 20, timeout: 3000 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    postChat(h);
    expect(tickOf(h)).toBe(4);
    h.redisCalls[0].reply(OK(hosts(2)[0].address)); // answered in time
    h.advance(5);
    // The short tick set the period that brings the next tick when the full one is due (500 ms
    // after the configuration), then the full tick the configured period.
    expect(tickOf(h)).toBe(496);
    h.advance(496);
    expect(tickOf(h)).toBe(500);
    postChat(h);
    expect(tickOf(h)).toBe(4);
  });

  it("a reply that arrives after the stream went on is released (no phantom lease)", async () => {
    h = await host({ configuration: glrConfig({ pickDeadlineMs: 20, timeout: 3000 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const { s } = postChat(h);
    const acquire = h.redisCalls[0];
    const leaseId = leaseIdOf(acquire.text);
    h.advance(24);
    expect(s.forwarded).not.toBeNull();
    expect(h.redisCalls.filter((c) => c.text.includes(leaseId))).toEqual([acquire]);
    acquire.reply(OK(hosts(2)[1].address)); // Redis ran it after all
    const release = h.redisCalls.filter((c) => c.text.includes(leaseId));
    expect(release.length).toBe(1);
    expect(release[0]).not.toBe(acquire);
  });

  it("a late LATE reply (Redis refused the acquire) sends nothing", async () => {
    h = await host({ configuration: glrConfig({ pickDeadlineMs: 20, timeout: 3000 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    postChat(h);
    const acquire = h.redisCalls[0];
    h.advance(24);
    const leaseId = leaseIdOf(acquire.text);
    acquire.reply("*2\r\n$4\r\nLATE\r\n$13\r\n1795000000000\r\n");
    expect(h.redisCalls.filter((c) => c.text.includes(leaseId))).toEqual([]);
  });

  it("after a miss, one pick at a time waits for Redis, the others fall back at once, until Redis answers in time", async () => {
    h = await host({ configuration: glrConfig({ pickDeadlineMs: 20, timeout: 3000, breakerFailures: 5 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    postChat(h);
    const stalled = h.redisCalls[0];
    h.advance(24);
    expect(misses(h)).toBe(1);
    const sent = h.redisCalls.length;
    const probe = postChat(h).s;
    expect(probe.forwarded).toBeNull(); // the one pick let wait
    expect(h.redisCalls.length).toBe(sent + 1);
    const probeCall = h.redisCalls[sent];
    const { s } = postChat(h);
    expect(s.forwarded!.upstream.via).toBe("override"); // no wait: decided at once
    expect(h.redisCalls.length).toBe(sent + 1);
    expect(h.metric("llmlb_redis_failures_total", { kind: "overdue" })).toBe(1);
    stalled.reply(OK(hosts(2)[0].address)); // Redis answers, too late for any pick: still overdue
    const acquires = () => h!.redisHistory.filter((c) => c.text.includes("acquire")).length;
    const before = acquires();
    expect(postChat(h).s.forwarded!.upstream.via).toBe("override");
    expect(acquires()).toBe(before);
    probeCall.reply(OK(hosts(2)[1].address)); // the waiting pick's answer, in time: picks wait again
    expect(probe.forwarded!.upstream.address).toBe(hosts(2)[1].address);
    const next = postChat(h).s;
    expect(next.forwarded).toBeNull();
    expect(acquires()).toBe(before + 1);
  });

  it("a Redis that answers, but always after the pick deadline, opens the breaker: picks stop waiting for it (a late reply closed it, and every pick waited its deadline in vain)", async () => {
    h = await host({ configuration: glrConfig({ pickDeadlineMs: 20, timeout: 3000 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const answered = new Set<object>();
    const waits: number[] = [];
    for (let t = 0; t < 3000; t += 10) {
      const { s } = postChat(h);
      const sentAt = t;
      h.advance(10);
      // Every call is answered 60 ms after it was sent (TIME too): slower than any pick may wait.
      for (const c of h.redisCalls) {
        if (answered.has(c) || c.settled) continue;
        const at = (c as unknown as { sentAt?: number }).sentAt ?? ((c as unknown as { sentAt?: number }).sentAt = t);
        if (t - at >= 60) {
          answered.add(c);
          c.reply(c.text.includes("TIME") ? "*2\r\n$10\r\n1795000000\r\n$1\r\n0\r\n" : OK(hosts(2)[0].address));
        }
      }
      if (t >= 1000) waits.push(s.forwarded ? 10 : 20);
    }
    expect(h.metric("llmlb_redis_breakers_open", {})).toBe(1);
    // After the first second, picks are decided at once (at most the odd one waits its deadline).
    expect(waits.filter((w) => w > 10).length).toBeLessThan(waits.length / 10);
  });

  it("a second miss with no reply since (the pick let wait missed too) opens the breaker at once", async () => {
    h = await host({ configuration: glrConfig({ pickDeadlineMs: 20, timeout: 3000, breakerFailures: 5 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    postChat(h);
    h.advance(24);
    postChat(h); // the one pick let wait
    h.advance(24);
    expect(misses(h)).toBe(2);
    expect(h.metric("llmlb_redis_breakers_open", {})).toBe(1);
    const sent = h.redisCalls.filter((c) => isScriptQuery(c.text)).length;
    expect(postChat(h).s.forwarded!.upstream.via).toBe("override");
    expect(h.redisCalls.filter((c) => isScriptQuery(c.text)).length).toBe(sent);
  });

  it("deadline misses count toward the breaker: after breakerFailures misses picks skip Redis", async () => {
    h = await host({ configuration: glrConfig({ pickDeadlineMs: 20, timeout: 3000, breakerFailures: 2 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    postChat(h);
    postChat(h);
    h.advance(24);
    expect(misses(h)).toBe(2);
    const sent = h.redisCalls.length;
    const { s } = postChat(h);
    expect(s.forwarded!.upstream.via).toBe("override"); // decided at once, no Redis call
    expect(h.redisCalls.length).toBe(sent);
    expect(fallbacks(h)).toBe(3);
  });

  // Every pick switches the tick to the short period and its reply back, and Envoy re-arms the
  // timer at each change (Wasm::setTickPeriod): with a request every 100 ms a 500 ms timer
  // re-armed at each reply would never fire, starving renewals, the healer and the probe.
  it("steady traffic does not starve the background tick: an open stream's lease is renewed, the healer runs", async () => {
    h = await host({ configuration: glrConfig({ pickDeadlineMs: 20, timeout: 3000, leaseTTL: 3 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const seen: RecordedRedisCall[] = [];
    // Redis answers every call, in order (one connection): picks, the clock probe, renewals, the healer.
    const answer = () => {
      for (const c of [...h!.redisCalls]) {
        if (!seen.includes(c)) seen.push(c);
        const q = parseReply(c.query) as string[];
        const script = scriptOf(q);
        if (c.text.includes(NS + ":seen")) c.reply(OK(hosts(2)[0].address));
        else if (q[0] === "TIME") c.reply(`*2\r\n$10\r\n${Math.floor(h!.now / 1000)}\r\n$1\r\n0\r\n`);
        else if (script === "renew") c.reply(":1\r\n");
        // Each healer call settles something, so it runs every tick (an idle one backs off).
        else if (script === "reconcile") c.reply("*3\r\n:1\r\n:0\r\n:0\r\n");
        else throw new Error(`unexpected call ${script ?? q[0]}`);
      }
    };
    postChat(h);
    answer();
    const longId = leaseIdOf(seen[0].text);
    for (let t = 0; t < 2000; t += 100) {
      h.advance(100);
      answer();
      postChat(h);
      answer();
    }
    const background = seen.filter((c) => !c.text.includes(NS + ":seen"));
    expect(background.filter((c) => c.text.includes(longId)).length).toBeGreaterThanOrEqual(1); // renewed at leaseTTL / 3
    const healerCalls = background.filter((c) => /\r\n\$3\r\n250\r\n$/.test(c.text)).length; // reconcile.lua, max 250
    expect(healerCalls).toBeGreaterThanOrEqual(3); // one per 500 ms tick over 2 s
  });

  it("an acquire answered SETTLING (expired buckets left to settle) is sent again, then picks; at most 8 times", async () => {
    h = await host({ configuration: glrConfig({ pickDeadlineMs: 20, timeout: 3000 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const { s } = postChat(h);
    const id = leaseIdOf(h.redisCalls[0].text);
    h.redisCalls[0].reply("*1\r\n$8\r\nSETTLING\r\n");
    const again = h.redisCalls.filter((c) => c.text.includes(id));
    expect(again.length).toBe(1); // the same lease id, sent again
    again[0].reply(OK(hosts(2)[1].address));
    expect(s.forwarded!.upstream.address).toBe(hosts(2)[1].address);
    const other = postChat(h).s;
    for (let i = 0; i < 9; i++) {
      const call = h.redisCalls.find((c) => c.text.includes(NS + ":seen"));
      if (call === undefined) break;
      call.reply("*1\r\n$8\r\nSETTLING\r\n");
    }
    expect(other.forwarded!.upstream.via).toBe("override"); // gave up after 8 resends: the fallback
    expect(fallbacks(h)).toBe(1);
  });
});
