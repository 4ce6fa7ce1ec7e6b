// Redis slow or away, seen from the stream: nothing a stream ends with is lost while the breaker
// is open (releases and queue exits are sent once Redis answers again), queueing fails open (an
// enter Redis does not answer within the pick deadline, a queued request whose poll cannot be
// sent), and an operator sees one line per breaker change and at most one per error kind per
// 10 s, not one per request.
import { afterEach, describe, expect, it } from "vitest";
import { CLUSTER, acquireOk, glrConfig, host, hosts, postChat } from "./harness.js";
import type { TestHost } from "../../host-test/facade/index.js";

const NS = `{llmlb:llm:${CLUSTER}}`;
let h: TestHost | null = null;
afterEach(() => { h?.close(); h = null; });

const OK = (addr: string) => acquireOk(addr, 0);
const TIME = () => `*2\r\n$10\r\n${Math.floor(Date.now() / 1000)}\r\n$1\r\n0\r\n`;
const QUEUED = "*2\r\n$6\r\nQUEUED\r\n$1\r\n0\r\n";
const leaseIdOf = (text: string) => /\r\n\$\d+\r\n([^\r]+:[0-9a-z]+)\r\n/.exec(text.split(NS + ":seen")[1])![1];

/** Two picks Redis does not answer open the breaker (the second miss with no reply between). */
function stallTwoPicks(t: TestHost): void {
  postChat(t); t.advance(24);
  postChat(t); t.advance(24);
  expect(t.metric("llmlb_redis_breakers_open", {})).toBe(1);
}

/** Redis answers everything at once again (replies within the tick), for `ms`. */
function answerEverything(t: TestHost, ms: number, reply: (text: string) => string): void {
  for (let i = 0; i < ms / 5; i++) {
    for (const c of [...t.redisCalls]) if (!c.settled) c.reply(c.text.includes("TIME") ? TIME() : reply(c.text));
    t.advance(5);
  }
}

describe("while the breaker is open", () => {
  it("a stream that ends is released once Redis answers again (the release was dropped: its count stayed until the lease TTL)", async () => {
    h = await host({ configuration: glrConfig({ pickDeadlineMs: 20, timeout: 3000, breakerFailures: 5 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const a = postChat(h).s;
    const acquire = h.redisCalls[0];
    const id = leaseIdOf(acquire.text);
    acquire.reply(OK(hosts(2)[0].address));
    expect(a.forwarded).not.toBeNull();
    stallTwoPicks(h);
    a.sendResponseHeaders({ ":status": "200" }, true);
    a.complete();
    const releases = () => h!.redisHistory.filter((c) => c !== acquire && c.text.includes(id) && c.text.includes("release")).length;
    expect(releases()).toBe(0); // not sent while the breaker is open
    answerEverything(h, 1500, () => ":1\r\n");
    expect(h.metric("llmlb_redis_breakers_open", {})).toBe(0);
    expect(releases()).toBe(1);
    expect(h.logs("warn").map((r) => r.message).filter((m) => m.includes("redis circuit breaker open"))).toHaveLength(1);
    expect(h.logs("info").map((r) => r.message).filter((m) => m.includes("redis circuit breaker closed"))).toHaveLength(1);
  });

  it("a queued request whose poll cannot be sent goes on (fail open), as a new arrival does, instead of a 429 at queueMaxWaitMs", async () => {
    h = await host({ configuration: glrConfig({ queueCapacity: 1, queueMaxWaitMs: 5000, timeout: 3000, breakerFailures: 2 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const waiting = postChat(h).s;
    h.redisCalls[0].reply(QUEUED);
    expect(waiting.forwarded).toBeNull();
    postChat(h); postChat(h);
    for (const c of [...h.redisCalls]) if (!c.settled) c.fail(); // Redis gone: the breaker opens
    expect(h.metric("llmlb_redis_breakers_open", {})).toBe(1);
    for (let t = 0; t < 20 && !waiting.forwarded && !waiting.localResponse; t++) {
      for (const c of [...h.redisCalls]) if (!c.settled) c.fail();
      h.advance(100);
    }
    expect(waiting.localResponse).toBeNull();
    expect(waiting.forwarded).not.toBeNull();
  });

  it("a queue exit is sent once Redis answers again (the slot stayed taken for the lease TTL)", async () => {
    h = await host({ configuration: glrConfig({ queueCapacity: 4, pickDeadlineMs: 20, timeout: 3000, breakerFailures: 5 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const a = postChat(h).s;
    const enter = h.redisCalls[0];
    expect(enter.text).toContain("enter");
    const queueId = /\r\nenter\r\n\$\d+\r\n([^\r]+)\r\n/.exec(enter.text)![1];
    enter.reply("*1\r\n$8\r\nADMITTED\r\n");
    h.redisCalls.find((c) => c.text.includes("acquire"))!.reply(OK(hosts(2)[0].address));
    expect(a.forwarded).not.toBeNull();
    stallTwoPicks(h);
    a.sendResponseHeaders({ ":status": "200" }, true);
    a.complete();
    const exits = () => h!.redisHistory.filter((c) => c.text.includes("\r\nexit\r\n") && c.text.includes(queueId)).length;
    expect(exits()).toBe(0);
    answerEverything(h, 1500, (text) => (text.includes("\r\nexit\r\n") ? "*1\r\n:1\r\n" : text.includes("queue") ? "*1\r\n$8\r\nADMITTED\r\n" : ":1\r\n"));
    expect(exits()).toBe(1);
  });
});

describe("queue enter", () => {
  it("an enter Redis does not answer within the pick deadline lets the request go on (it waited for the Redis timeout, or was shed at queueMaxWaitMs)", async () => {
    h = await host({ configuration: glrConfig({ queueCapacity: 1, queueMaxWaitMs: 1000, pickDeadlineMs: 20, timeout: 3000 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const { s } = postChat(h);
    const enter = h.redisCalls[0];
    expect(enter.text).toContain("enter");
    h.advance(24);
    // The enter's wait is over: the request goes on to its policy (whose acquire waits in turn).
    const acquire = h.redisCalls.find((c) => c.text.includes("acquire"));
    expect(acquire).toBeDefined();
    enter.reply(QUEUED); // late: the request is not held back by it
    acquire!.reply(OK(hosts(2)[1].address));
    expect(s.localResponse).toBeNull();
    expect(s.forwarded!.upstream.address).toBe(hosts(2)[1].address);
    s.sendResponseHeaders({ ":status": "200" }, true);
    s.complete();
    // Its entry (queued by the late enter) is removed with the stream.
    expect(h.redisHistory.filter((c) => c.text.includes("\r\nexit\r\n"))).toHaveLength(1);
  });
});

describe("warnings", () => {
  it("an error reply on every call is one warning per 10 s with the count left out, not one per request", async () => {
    h = await host({ configuration: glrConfig({ timeout: 3000 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const lines = () => h!.logs("warn").map((r) => r.message).filter((m) => m.includes("acquire failed"));
    for (let i = 0; i < 210; i++) { // a request every 50 ms for 10.5 s, every call answered READONLY
      postChat(h);
      for (const c of [...h.redisCalls]) if (!c.settled) c.reply("-READONLY You can't write against a read only replica.\r\n");
      h.advance(50);
      if (i === 150) expect(lines()).toHaveLength(1);
    }
    expect(lines()).toHaveLength(2);
    expect(lines()[0]).toContain("READONLY");
    expect(Number(/\((\d+) more since the last such warning\)/.exec(lines()[1])![1])).toBeGreaterThan(190);
    expect(h.metric("llmlb_redis_breakers_open", {})).toBe(0); // an answer, if an error, is no outage
  });
});
