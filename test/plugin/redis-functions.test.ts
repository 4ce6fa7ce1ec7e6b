// Script calls as Redis functions (assembly/redis/functions.ts): FCALL of the plugin's library
// where Redis has functions, the library loaded by whichever gateway first misses it, EVALSHA for
// good where Redis refuses functions (an ACL, Redis < 7, a proxy), and a function's own error
// reply handed to the caller like EVALSHA's. Real Redis where it can say it; record mode for the
// replies this Redis 7 cannot give (an unknown FCALL command).
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CLUSTER, advanceWithIo, glrConfig, host, hosts, postChat, useRedisHost } from "./harness.js";
import type { TestHost } from "../../host-test/facade/index.js";
import { LIBRARY_NAME, LIBRARY_TEXT, SCRIPT_TEXTS, scriptOf } from "../helpers/script-calls.js";
import { parseReply } from "../../host-test/resp.js";

const t = useRedisHost(async (client) => { await client.function("FLUSH"); await client.script("FLUSH"); });

/** Calls per command since the last RESETSTAT (INFO commandstats; "function|load" as function_load). */
async function commandCalls(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const m of (await t.client.info("commandstats")).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[m[1].replace("|", "_")] = Number(m[2]);
  return out;
}

async function pick(hh: TestHost): Promise<string> {
  const { s } = postChat(hh);
  await hh.redisIdle();
  expect(s.forwarded!.upstream.via).toBe("override");
  s.sendResponseHeaders({ ":status": "200" }, true);
  s.complete();
  await hh.redisIdle();
  return s.forwarded!.upstream.address!;
}

const libraries = async () => ((await t.client.function("LIST")) as unknown[][]).map((lib) => String(lib[1]));

describe("functions on a Redis that has them", () => {
  it("a Redis without the library: the first pick goes again as EVALSHA, the library loads, later picks are one FCALL", async () => {
    const h = t.host = await host({ configuration: glrConfig({ failurePenalty: 0 }), redis: { url: t.redis.url } });
    await t.client.config("RESETSTAT");
    await pick(h);
    expect(await libraries()).toEqual([LIBRARY_NAME]);
    const first = await commandCalls();
    expect(first.evalsha).toBeGreaterThanOrEqual(1); // the FCALL that missed, re-sent
    expect(first.function_load).toBe(1); // one FUNCTION LOAD
    await t.client.config("RESETSTAT");
    for (let i = 0; i < 3; i++) await pick(h);
    const later = await commandCalls();
    expect(later.fcall).toBe(6); // 3 acquires + 3 releases
    expect(later.evalsha ?? 0).toBe(0);
    expect(later.eval ?? 0).toBe(0);
    expect(await t.client.zcard(`{llmlb:llm:${CLUSTER}}:leases`)).toBe(0);
  });

  it("a library another gateway loaded: every call is an FCALL from the first", async () => {
    await t.client.function("LOAD", LIBRARY_TEXT);
    const h = t.host = await host({ configuration: glrConfig(), redis: { url: t.redis.url } });
    await t.client.config("RESETSTAT");
    await pick(h);
    const calls = await commandCalls();
    expect(calls.fcall).toBe(2);
    expect(calls.evalsha ?? 0).toBe(0);
    expect(calls.function_load ?? 0).toBe(0);
  });

  it("a Redis that lost its functions long after the load gets the library again; lost again at once, EVALSHA for good", async () => {
    const h = t.host = await host({ configuration: glrConfig(), redis: { url: t.redis.url } });
    await pick(h);
    await advanceWithIo(h, 11_000); // the load is now older than FORGETS_WITHIN_MS
    await t.client.function("FLUSH"); // e.g. a restart of a Redis without persistence
    await pick(h);
    expect(await libraries()).toEqual([LIBRARY_NAME]); // loaded again
    await t.client.function("FLUSH"); // gone again within seconds: functions do not stick here
    await pick(h);
    expect(h.logMessages().some((m) => m.includes("scripts go as EVALSHA, not FCALL") && m.includes("not found"))).toBe(true);
    await t.client.config("RESETSTAT");
    await pick(h);
    const calls = await commandCalls();
    expect(calls.fcall ?? 0).toBe(0);
    expect(calls.evalsha).toBe(2);
    expect(await libraries()).toEqual([]); // not loaded again
  });
});

describe("a Redis that refuses functions", () => {
  it("an ACL without FCALL (NOPERM): EVALSHA for good, picks unaffected, one warning", async () => {
    await t.client.call("ACL", "SETUSER", "nofn", "on", ">s3cret", "~*", "&*", "+@all", "-fcall", "-function");
    try {
      const h = t.host = await host({ configuration: glrConfig({ username: "nofn", password: "s3cret" }), redis: { url: t.redis.url } });
      await t.client.config("RESETSTAT");
      // Four streams open together: least request spreads them over the four hosts (picks made
      // one after another, each ended first, would tie at 0 and might all draw the same host).
      const open = [];
      for (let i = 0; i < 4; i++) {
        const { s } = postChat(h);
        await h.redisIdle();
        expect(s.forwarded!.upstream.via).toBe("override");
        open.push(s);
      }
      expect(new Set(open.map((s) => s.forwarded!.upstream.address)).size).toBe(4);
      for (const s of open) {
        s.sendResponseHeaders({ ":status": "200" }, true);
        s.complete();
      }
      await h.redisIdle();
      const calls = await commandCalls();
      expect(calls.fcall ?? 0).toBe(0); // refused calls are not counted as calls
      expect(calls.evalsha).toBeGreaterThanOrEqual(8);
      const warnings = h.logMessages().filter((m) => m.includes("scripts go as EVALSHA, not FCALL"));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain("NOPERM");
      expect(warnings[0]).not.toContain("s3cret");
      expect(h.metric("llmlb_picks_total", { policy: "global_least_request", reason: "least_request" })).toBe(4);
    } finally {
      await t.client.call("ACL", "DELUSER", "nofn");
    }
  });

  it("Redis < 7 (unknown command FCALL): the same call goes again as EVALSHA with the same keys and arguments", async () => {
    const h = t.host = await host({ configuration: glrConfig(), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const { s } = postChat(h);
    const [fcall] = h.redisCalls;
    const sent = parseReply(fcall.query) as string[];
    expect(sent[0]).toBe("FCALL");
    expect(scriptOf(sent)).toBe("acquire");
    fcall.reply(`-ERR unknown command 'FCALL', with args beginning with: '${sent[1]}' '5' \r\n`);
    const [again] = h.redisCalls;
    const resent = parseReply(again.query) as string[];
    expect(resent[0]).toBe("EVALSHA");
    expect(scriptOf(resent)).toBe("acquire");
    expect(resent.slice(2)).toEqual(sent.slice(2));
    // The script cache is empty too: EVAL with the text the plugin joins from its embedded pieces,
    // which must be the text whose SHA-1 it sent (else EVALSHA would never find it cached).
    again.reply("-NOSCRIPT No matching script. Please use EVAL.\r\n");
    const [evalCall] = h.redisCalls;
    const text = parseReply(evalCall.query) as string[];
    expect(text[0]).toBe("EVAL");
    expect(text[1]).toBe(SCRIPT_TEXTS.acquire);
    expect(createHash("sha1").update(text[1]).digest("hex")).toBe(resent[1]);
    expect(text.slice(2)).toEqual(sent.slice(2));
    evalCall.reply("*3\r\n$2\r\nOK\r\n$13\r\n10.0.0.2:8000\r\n$1\r\n0\r\n");
    expect(s.forwarded!.upstream.address).toBe("10.0.0.2:8000");
    postChat(h);
    expect((parseReply(h.redisCalls.at(-1)!.query) as string[])[0]).toBe("EVALSHA"); // no FCALL again
    expect(h.redisCalls.some((c) => c.text.includes("FUNCTION"))).toBe(false);
  });
});

describe("a proxy that closes the connection on FCALL (twemproxy)", () => {
  const verb = (c: { query: Buffer }) => (parseReply(c.query) as string[])[0];

  it("three FCALLs lost before any reply, then an EVALSHA answered: EVALSHA for good", async () => {
    const h = t.host = await host({ configuration: glrConfig({ breakerFailures: 10 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    for (let i = 0; i < 3; i++) {
      const { s } = postChat(h);
      const [call] = h.redisCalls;
      expect(verb(call)).toBe("FCALL");
      call.fail(); // the proxy drops the connection
      expect(s.forwarded!.upstream.via).toBe("override"); // local fallback
    }
    const { s } = postChat(h);
    const [probe] = h.redisCalls;
    expect(verb(probe)).toBe("EVALSHA");
    probe.reply("*3\r\n$2\r\nOK\r\n$13\r\n10.0.0.2:8000\r\n$1\r\n0\r\n");
    expect(s.forwarded!.upstream.address).toBe("10.0.0.2:8000");
    postChat(h);
    expect(verb(h.redisCalls.at(-1)!)).toBe("EVALSHA");
    expect(h.logMessages().filter((m) => m.includes("scripts go as EVALSHA, not FCALL") && m.includes("lost"))).toHaveLength(1);
  });

  it("an outage loses the EVALSHA probe too: FCALL goes on", async () => {
    const h = t.host = await host({ configuration: glrConfig({ breakerFailures: 10 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    for (let i = 0; i < 3; i++) { postChat(h); h.redisCalls[0].fail(); }
    postChat(h);
    expect(verb(h.redisCalls[0])).toBe("EVALSHA");
    h.redisCalls[0].fail();
    postChat(h);
    expect(verb(h.redisCalls[0])).toBe("FCALL");
    expect(h.logMessages().some((m) => m.includes("not FCALL"))).toBe(false);
  });
});

describe("replies that are not about functions", () => {
  it("a function's own error reply reaches the pick as EVALSHA's would: fallback, nothing re-sent", async () => {
    const h = t.host = await host({ configuration: glrConfig(), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const { s } = postChat(h);
    expect(h.redisCalls).toHaveLength(1);
    h.redisCalls[0].reply("-ERR acquire: cost must be an integer\r\n");
    expect(h.redisCalls).toHaveLength(0);
    expect(s.forwarded).not.toBeNull();
    expect(h.metric("llmlb_redis_failures_total", { kind: "error_reply" })).toBe(1);
    postChat(h);
    expect((parseReply(h.redisCalls[0].query) as string[])[0]).toBe("FCALL"); // functions stay on
  });

  it("FUNCTION LOAD answered 'already exists' (another gateway was first) counts as loaded, not as an error", async () => {
    const h = t.host = await host({ configuration: glrConfig(), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    postChat(h);
    h.redisCalls[0].reply("-ERR Function not found\r\n");
    const load = h.redisCalls.find((c) => (parseReply(c.query) as string[])[0] === "FUNCTION")!;
    expect((parseReply(load.query) as string[]).slice(0, 2)).toEqual(["FUNCTION", "LOAD"]);
    expect((parseReply(load.query) as string[])[2]).toBe(LIBRARY_TEXT);
    // Redis answers in send order: the pick's EVALSHA went first.
    expect(h.redisCalls.map((c) => (parseReply(c.query) as string[])[0])).toEqual(["EVALSHA", "FUNCTION"]);
    h.redisCalls[0].reply("*3\r\n$2\r\nOK\r\n$13\r\n10.0.0.1:8000\r\n$1\r\n0\r\n");
    load.reply(`-ERR Library '${LIBRARY_NAME}' already exists\r\n`);
    expect(h.metric("llmlb_redis_failures_total", { kind: "error_reply" }) ?? 0).toBe(0);
    postChat(h);
    expect((parseReply(h.redisCalls.at(-1)!.query) as string[])[0]).toBe("FCALL");
  });
});
