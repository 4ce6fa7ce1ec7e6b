// Requests with HTTP/2 request trailers: the last body chunk is not the end of stream, the trailers
// are (host-test/README.md "request trailers"). The plugin decides on them as on the body's end and
// holds them while a pick is out; Envoy would otherwise send the request upstream unbalanced.
import { describe, expect, it } from "vitest";
import { CHAT_BODY, CLUSTER, acquireOk, glrConfig, host, hosts, poolLoads, postChat, useRedisHost } from "./harness.js";
import type { TestHost } from "../../host-test/facade/index.js";
import { scriptOf } from "../helpers/script-calls.js";
import { parseReply } from "../../host-test/resp.js";

const NS = `{llmlb:llm:${CLUSTER}}`;
const DEBUG = "x-llmlb-debug";
const Continue = 0, StopIteration = 1, StopIterationAndWatermark = 2;
const t = useRedisHost();

/** A chat request whose body ends with trailers (HTTP/2): the body is sent with end_stream false. */
function chatWithTrailers(h: TestHost, body = CHAT_BODY) {
  const s = h.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route: "llm", headers: { "content-type": "application/json", te: "trailers" } });
  const headerAction = s.sendRequestHeaders(false);
  const bodyAction = s.sendRequestBody(body, false);
  return { s, headerAction, bodyAction, trailers: () => s.sendRequestTrailers({ "x-checksum": "abc" }) };
}

/** Script calls of one name sent to the real Redis. */
const scripts = (h: TestHost, name: string) => h.redisSent.filter((c) => scriptOf(parseReply(c.query) as string[]) === name).length;
const reasonOf = (debug: string | undefined) => /reason=([^;]*)/.exec(debug ?? "")?.[1];
/** A chat body over the smallest maxBodyBytes (1024). */
const BIG = JSON.stringify({ model: "m", messages: [{ role: "user", content: "x".repeat(2000) }] });
const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);

describe("request trailers", () => {
  it("a request with trailers is balanced like one without: same pick reason, one lease taken and released once", async () => {
    const h = t.host = await host({ configuration: glrConfig({ debugHeader: DEBUG }), redis: { url: t.redis.url } });
    const plain = postChat(h).s;
    await h.redisIdle();
    plain.sendResponseHeaders({ ":status": "200" }, true);
    await h.redisIdle();
    const acquires = scripts(h, "acquire"), releases = scripts(h, "release"); // the first pick also loads the functions

    const r = chatWithTrailers(h);
    expect(r.headerAction).toBe(StopIteration);
    expect(r.bodyAction).toBe(StopIterationAndWatermark); // not the end: the trailers are
    expect(r.trailers()).toBe(StopIteration); // the pick is out
    await h.redisIdle();
    const f = r.s.forwarded!;
    expect(f.upstream.via).toBe("override");
    expect(f.body.toString()).toBe(CHAT_BODY);
    expect(f.trailers).toEqual({ "x-checksum": "abc" });
    expect(f.ended).toBe(true);
    expect(sum(await poolLoads(t.client, NS))).toBe(1);
    r.s.sendResponseHeaders({ ":status": "200" }, true);
    await h.redisIdle();
    expect(reasonOf(r.s.response.headers[DEBUG])).toBe(reasonOf(plain.response.headers[DEBUG]));
    expect(reasonOf(r.s.response.headers[DEBUG])).toBe("least_request");
    expect(scripts(h, "acquire") - acquires).toBe(1);
    expect(scripts(h, "release") - releases).toBe(1);
    expect(sum(await poolLoads(t.client, NS))).toBe(0);
    expect(await t.client.hlen(`${NS}:lease`)).toBe(0);
  });

  it("a pending Redis pick holds the trailers (and the request) until the pick", async () => {
    const h = t.host = await host({ configuration: glrConfig({ pickDeadlineMs: 200, timeout: 3000 }), redis: "record", clusters: { [CLUSTER]: hosts(2) } });
    const r = chatWithTrailers(h);
    expect(r.trailers()).toBe(StopIteration);
    expect(h.redisCalls.length).toBe(1);
    h.advance(50);
    expect(r.s.forwarded).toBeNull();
    h.redisCalls[0].reply(acquireOk(hosts(2)[1].address, 0));
    const f = r.s.forwarded!;
    expect(f.upstream).toMatchObject({ via: "override", address: hosts(2)[1].address });
    expect(f.trailers).toEqual({ "x-checksum": "abc" });
    expect(f.ended).toBe(true);
    expect(r.s.overrideHost.lateRequests).toBe(0);
  });

  it("a body over maxBodyBytes is decided from its size: trailers while that pick is out wait for it, after it they go on", async () => {
    const h = t.host = await host({ configuration: glrConfig({ maxBodyBytes: 1024 }), redis: { url: t.redis.url } });
    const pending = chatWithTrailers(h, BIG);
    expect(pending.bodyAction).toBe(StopIterationAndWatermark); // decided at once from the size; the pick is out
    // Held past the buffer limit (= maxBodyBytes) the downstream is read-disabled, but HTTP/2 still
    // delivers the trailers (host-test/README.md "request trailers").
    expect(pending.trailers()).toBe(StopIteration);
    expect(pending.s.forwarded).toBeNull();
    await h.redisIdle();
    expect(pending.s.forwarded!.upstream.via).toBe("override");
    expect(pending.s.forwarded!.body.toString()).toBe(BIG);
    expect(pending.s.forwarded!.trailers).toEqual({ "x-checksum": "abc" });
    expect(pending.s.overrideHost.lateRequests).toBe(0);

    const decided = chatWithTrailers(h, BIG);
    await h.redisIdle();
    expect(decided.s.forwarded!.upstream.via).toBe("override");
    expect(decided.s.forwarded!.ended).toBe(false);
    expect(decided.trailers()).toBe(Continue);
    expect(decided.s.forwarded!.trailers).toEqual({ "x-checksum": "abc" });
    expect(decided.s.forwarded!.ended).toBe(true);

    for (const s of [pending.s, decided.s]) s.sendResponseHeaders({ ":status": "200" }, true);
    await h.redisIdle();
    expect(scripts(h, "release")).toBe(2);
    expect(sum(await poolLoads(t.client, NS))).toBe(0);
  });
});
