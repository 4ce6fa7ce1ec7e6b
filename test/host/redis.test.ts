// Higress Redis calls (higress-abi.md "Higress imports"): redis_init per VM and cluster, tokens
// 3 (mod 4), replies on the root context with status 0/1, buffer 9 readable only inside the
// callback, acting on the stream through set_effective_context. Real Redis through
// RedisClusterClient for the `redis: { url }` mode.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestHost } from "../../host-test/facade/index.js";
import { startRedis, type RedisFixture } from "../helpers/redis.js";
import { buildGuest } from "./guests/build.js";

let higress: string, scripted: string;
let redis: RedisFixture;
beforeAll(async () => {
  [higress, scripted] = await Promise.all([buildGuest("higress-100"), buildGuest("scripted-100")]);
  redis = await startRedis();
});
afterAll(async () => { await redis?.stop(); });

const RC = "outbound|6379||redis.static";
const clusters = { "outbound|8000||vllm.static": [{ address: "10.0.0.1:8000" }, { address: "10.0.0.2:8000" }] };

describe("recorded redis calls", () => {
  it("sends the raw RESP query, answers with a 3-mod-4 token on the root context, and continues the stream", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}?db=2`, clusters, redisClusters: [RC] });
    const s = h.stream({ headers: { "x-redis-cmd": "INCR k" } });
    s.sendRequestHeaders(true);
    expect(s.forwarded).toBeNull();
    expect(h.redisCalls).toHaveLength(1);
    const call = h.redisCalls[0];
    expect(call.cluster).toBe(`${RC}?db=2`);
    expect(call.text).toBe("*2\r\n$4\r\nINCR\r\n$1\r\nk\r\n");
    expect(h.logMessages().find((m) => m.startsWith("redis_call"))).toMatch(/status=0 token=\d+ mod4=3/);
    call.reply(":7\r\n");
    expect(h.logMessages()).toContain(`redis_reply root=1 token=${h.logMessages().find((m) => m.startsWith("redis_call"))!.match(/token=(\d+)/)![1]} status=0 size=4 reply=:7|`);
    expect(h.logMessages()).toContain(`effective ctx=${s.contextId} status=0`);
    expect(s.forwarded?.ended).toBe(true);
    expect(h.redisCalls).toHaveLength(0);
  });

  it("tokens are unique across calls", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC] });
    for (let i = 0; i < 3; i++) h.stream({ headers: { "x-redis-cmd": "GET k" } }).sendRequestHeaders(true);
    const tokens = h.logMessages().filter((m) => m.startsWith("redis_call")).map((m) => Number(m.match(/token=(\d+)/)![1]));
    expect(new Set(tokens).size).toBe(3);
    expect(tokens.every((t) => t % 4 === 3)).toBe(true);
  });

  it("fail() is a NetworkError: status 1, size 0", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC] });
    h.stream({ headers: { "x-redis-cmd": "GET k" } }).sendRequestHeaders(true);
    h.redisCalls[0].fail();
    expect(h.logMessages().find((m) => m.startsWith("redis_reply"))).toMatch(/status=1 size=0 reply=$/);
  });

  it("fail() drops the connection, the only NetworkError Envoy has: every call pending on it fails, in send order", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC], workers: 2 });
    for (const k of ["a", "b", "c"]) h.stream({ vm: 0, headers: { "x-redis-cmd": `GET ${k}` } }).sendRequestHeaders(true);
    h.stream({ vm: 1, headers: { "x-redis-cmd": "GET other-worker" } }).sendRequestHeaders(true);
    const [a, b, c] = h.redisCalls;
    b.fail();
    expect([a, b, c].map((x) => x.settled && !x.timedOut)).toEqual([true, true, true]);
    const tokens = h.logs("info", { vm: 0 }).map((r) => r.message).filter((m) => m.startsWith("redis_call")).map((m) => m.match(/token=(\d+)/)![1]);
    const failedTokens = h.logMessages().filter((m) => m.startsWith("redis_reply")).map((m) => m.match(/token=(\d+) status=1/)![1]);
    expect(failedTokens).toEqual(tokens);
    expect(h.redisCalls.map((x) => x.vm)).toEqual([1]); // another worker's connection
  });

  it("a call a failure callback makes fails in the same close (the client still holds the closing connection)", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC] });
    const s = h.stream({ headers: { "x-redis-cmd": "GET a", "x-after-redis": "call:GET retry" } });
    s.sendRequestHeaders(true);
    h.advance(1000); // the op timer fires: GET a fails, its callback sends GET retry, which fails too
    expect(h.redisHistory.map((c) => [c.text.includes("retry"), c.settled])).toEqual([[false, true], [true, true]]);
    expect(h.logMessages().filter((m) => m.startsWith("redis_reply")).map((m) => / status=1 /.test(m))).toEqual([true, true]);
    expect(s.forwarded?.ended).toBe(true);
    // Afterwards a new connection: the next call waits for its reply.
    h.stream({ headers: { "x-redis-cmd": "GET b" } }).sendRequestHeaders(true);
    expect(h.redisCalls).toHaveLength(1);
  });

  it("a call a callback makes after a re-init's close goes to the new connection (Envoy defers the callbacks past the VM call)", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC] });
    h.stream({ headers: { "x-redis-cmd": "GET a", "x-after-redis": "call:GET retry" } }).sendRequestHeaders(true);
    h.stream({ headers: { "x-redis-reinit": "1" } }).sendRequestHeaders(true);
    expect(h.redisCalls.map((c) => c.text.includes("retry"))).toEqual([true]);
  });

  it("a call unanswered within the redis_init timeout ends as NetworkError (manual clock)", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC] });
    h.stream({ headers: { "x-redis-cmd": "GET k" } }).sendRequestHeaders(true);
    h.advance(999);
    expect(h.logMessages().some((m) => m.startsWith("redis_reply"))).toBe(false);
    h.advance(1);
    expect(h.redisHistory[0].timedOut).toBe(true);
    expect(h.logMessages().find((m) => m.startsWith("redis_reply"))).toMatch(/status=1/);
  });
});

// Envoy keeps ONE timer per connection of the worker's client (raw_client_impl.cc
// connect_or_op_timer_): armed by a call that becomes pending with none before it, restarted by
// every reply, and when it fires every pending call fails at once (host-test/README.md).
describe("recorded redis calls: the connection's one op timer", () => {
  const send = (h: TestHost, cmd: string, vm = 0) => h.stream({ vm, headers: { "x-redis-cmd": cmd } }).sendRequestHeaders(true);
  const failed = (h: TestHost) => h.logMessages().filter((m) => m.startsWith("redis_reply") && / status=1 /.test(m)).length;

  it("a later call does not restart the timer: sent just before it fires, it fails with the first, early", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC] });
    send(h, "GET a");
    h.advance(900);
    send(h, "GET b");
    h.advance(99);
    expect(failed(h)).toBe(0);
    h.advance(1); // 1000 ms after the first call, 100 ms after the second
    expect(failed(h)).toBe(2);
    expect(h.redisHistory.map((c) => c.timedOut)).toEqual([true, true]);
    expect(h.redisCalls).toHaveLength(0);
  });

  it("every reply restarts the timer: a call queued behind slow replies outlives the op timeout", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC] });
    send(h, "GET a");
    send(h, "GET b");
    send(h, "GET c");
    const [a, b, c] = h.redisCalls;
    h.advance(900);
    a.reply("$-1\r\n"); // Redis answers in order, each reply within the op timeout of the last
    h.advance(900);
    b.reply("$-1\r\n");
    h.advance(999); // 2799 ms after c was sent
    expect(c.settled).toBe(false);
    h.advance(1);
    expect(c.timedOut).toBe(true);
    expect(failed(h)).toBe(1);
  });

  it("with nothing pending the timer is off; the next call arms it anew, and after it fired a new connection starts", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC] });
    send(h, "GET a");
    h.advance(500);
    h.redisCalls[0].reply(":1\r\n");
    h.advance(800);
    send(h, "GET b");
    h.advance(999);
    expect(h.redisCalls).toHaveLength(1);
    h.advance(1);
    expect(h.redisHistory[1].timedOut).toBe(true);
    send(h, "GET c");
    h.advance(999);
    expect(h.redisCalls).toHaveLength(1);
    h.advance(1);
    expect(failed(h)).toBe(2);
  });

  it("Redis answers a connection's calls in send order: a reply to a call behind an unanswered one is refused", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC], workers: 2 });
    send(h, "GET a", 0);
    send(h, "GET b", 0);
    send(h, "GET other", 1);
    const [a, b, other] = h.redisCalls;
    expect(() => b.reply(":2\r\n")).toThrow(/send order/);
    other.reply(":3\r\n"); // another worker's connection: its own order
    a.reply(":1\r\n");
    b.reply(":2\r\n");
    expect(h.redisCalls).toHaveLength(0);
  });

  it("each worker has its own connection and timer", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC], workers: 2 });
    send(h, "GET a", 0);
    h.advance(600);
    send(h, "GET b", 1);
    h.advance(400);
    expect(h.redisCalls.map((c) => c.vm)).toEqual([1]);
    h.advance(600);
    expect(h.redisCalls).toHaveLength(0);
  });

  it("op timeout 0 is a 0 ms timer, not none: the call fails at the clock's next step", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC};timeout=0`, clusters, redisClusters: [RC] });
    send(h, "GET a");
    expect(h.redisCalls).toHaveLength(1);
    h.advance(0);
    expect(h.redisHistory[0].timedOut).toBe(true);
    expect(failed(h)).toBe(1);
  });

  it("an unreachable Redis: calls wait for the cluster's connect timeout (10 s), not the op timeout, then fail together", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC] });
    h.backend.redisUnreachable.add(RC);
    send(h, "GET a");
    h.advance(9000);
    send(h, "GET b");
    expect(() => h.redisCalls[0].reply(":1\r\n")).toThrow(/never came up/);
    h.advance(999);
    expect(failed(h)).toBe(0);
    h.advance(1);
    expect(h.redisHistory.map((c) => c.timedOut)).toEqual([true, true]);
    h.backend.redisUnreachable.delete(RC);
    send(h, "GET c"); // a new connection, up at once: the op timeout again
    h.advance(1000);
    expect(failed(h)).toBe(3);
  });

  it("a re-init closes the connection: its pending calls fail at once (not timed out)", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC] });
    send(h, "GET a");
    h.stream({ headers: { "x-redis-reinit": "1" } }).sendRequestHeaders(true);
    expect(h.redisHistory[0].settled && !h.redisHistory[0].timedOut).toBe(true);
    expect(h.backend.redisConnections.size).toBe(0);
  });
});

describe("recorded redis calls (continued)", () => {
  it("a cluster nobody initialised (no such Redis cluster) is refused (BadArgument) and no call is made", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC] });
    const s = h.stream({ headers: { "x-redis-cmd": "GET k", "x-redis-cluster": "outbound|6380||other" } });
    s.sendRequestHeaders(true);
    expect(h.logMessages()).toContain("redis_call status=2 token=0 mod4=0");
    expect(h.redisCalls).toHaveLength(0);
    expect(s.forwarded?.ended).toBe(true);
  });

  it("redis_init on a cluster that does not exist is BadArgument and initialises nothing (Envoy: no thread-local cluster)", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: "redis=outbound|6380||nowhere.static?db=1", clusters, redisClusters: [RC] });
    expect(h.logMessages()).toContain("redis_init status=2");
    expect(h.backend.redisInits.size).toBe(0);
    // And the name stays unknown: a call on it is refused too.
    h.stream({ headers: { "x-redis-cmd": "GET k" } }).sendRequestHeaders(true);
    expect(h.logMessages()).toContain("redis_call status=2 token=0 mod4=0");
    expect(h.redisCalls).toHaveLength(0);
  });

  it("redis_init is per worker: each worker has its own client for the cluster", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC], workers: 2 });
    expect([...h.backend.redisInits.keys()].sort()).toEqual([`0|${RC}`, `1|${RC}`]);
  });

  it("the reply after the client aborted is handled without touching the stream", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC] });
    const s = h.stream({ headers: { "x-redis-cmd": "GET k" } });
    s.sendRequestHeaders(true);
    s.abort();
    h.redisCalls[0].reply("$-1\r\n");
    expect(h.logMessages()).toContain(`effective ctx=${s.contextId} status=2`);
    expect(s.forwarded).toBeNull();
    expect(h.vms[0].failed).toBe(false);
  });

  it("the guest can answer locally from the reply callback", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC] });
    const s = h.stream({ headers: { "x-redis-cmd": "INCR k", "x-after-redis": "local" } });
    s.sendRequestHeaders(true);
    h.redisCalls[0].reply(":100\r\n");
    expect(s.response.status).toBe(429);
    expect(s.response.body.toString()).toBe("slow down");
    expect(s.forwarded).toBeNull();
  });

  it("buffer 9 is NotFound outside the reply callback", async () => {
    const h = await TestHost.create({ wasm: scripted, configuration: "tick=10" });
    h.advance(10);
    expect(h.logMessages()).toContain("tick 1 root=1 buffer9=1");
  });
});

describe("real redis", () => {
  it("queries reach redis-server and raw replies come back", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC], redis: { url: redis.url } });
    try {
      const a = h.stream({ headers: { "x-redis-cmd": "INCR facade-counter" } });
      a.sendRequestHeaders(true);
      await h.redisIdle();
      const b = h.stream({ headers: { "x-redis-cmd": "INCR facade-counter" } });
      b.sendRequestHeaders(true);
      await h.redisIdle();
      const replies = h.logMessages().filter((m) => m.startsWith("redis_reply")).map((m) => m.split("reply=")[1]);
      expect(replies).toEqual([":1|", ":2|"]);
      expect(a.forwarded?.ended && b.forwarded?.ended).toBe(true);
    } finally {
      h.close();
    }
  });

  it("redis_init on a cluster that does not exist is BadArgument with a real Redis too", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redis: { url: redis.url } });
    try {
      expect(h.logMessages()).toContain("redis_init status=2");
      expect(h.backend.sharedRedis.keys()).toEqual([]);
    } finally {
      h.close();
    }
  });

  it("the connection is bounded by the cluster's connect timeout (10 s by default), not by the op timeout", async () => {
    for (const [opts, want] of [[{}, 10_000], [{ redisConnectTimeoutMs: 250 }, 250]] as const) {
      const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC};timeout=5`, clusters, redisClusters: [RC], redis: { url: redis.url }, ...opts });
      try {
        expect(h.backend.sharedRedis.client(0, RC, { host: "unused", port: 0 }).opts).toMatchObject({ timeoutMs: 5, connectTimeoutMs: want });
      } finally {
        h.close();
      }
    }
  });

  it("an unreachable redis is a NetworkError", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: `redis=${RC}`, clusters, redisClusters: [RC], redis: { url: "redis://127.0.0.1:1" } });
    try {
      h.stream({ headers: { "x-redis-cmd": "GET k" } }).sendRequestHeaders(true);
      await h.redisIdle();
      expect(h.logMessages().find((m) => m.startsWith("redis_reply"))).toMatch(/status=1 size=0/);
    } finally {
      h.close();
    }
  });
});
