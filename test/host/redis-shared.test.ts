// Audit rows 3, 4 and 12 (host-test/README.md fidelity table): ONE Redis client per cluster per
// worker, shared by every VM, root and plugin; proxy_redis_init re-initialises it for everyone
// (closing it fails the calls in flight, new credentials/db apply to all); Envoy's write batching
// (3 ms / 1024 bytes unless the init's query sets buffer_flush_timeout /
// max_buffer_size_before_flush), the bytes written from the event loop, not inside the call; a
// call on a cluster nobody initialised uses the defaults.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { TestHost } from "../../host-test/facade/index.js";
import { RedisClusterClient } from "../../host-test/gateway/redis-client.js";
import { redisSettings } from "../../host-test/gateway/redis-shared.js";
import { encodeCommand } from "../../host-test/resp.js";
import { startRedis, type RedisFixture } from "../helpers/redis.js";
import { buildGuest } from "./guests/build.js";

let higress: string;
let server: RedisFixture;
let admin: Redis;
beforeAll(async () => {
  higress = await buildGuest("higress-100");
  server = await startRedis();
  admin = new Redis(server.port, server.host);
  await admin.call("ACL", "SETUSER", "alice", "on", ">pw-a", "~*", "+@all");
  await admin.call("ACL", "SETUSER", "bob", "on", ">pw-b", "~*", "+@all");
});
afterAll(async () => {
  admin?.disconnect();
  if (server?.owned) await server.stop();
});

const RC = "outbound|6379||redis.static";
const clusters = { c: [{ address: "10.0.0.1:8000" }] };
const replies = (h: TestHost) => h.logMessages().filter((m) => m.startsWith("redis_reply")).map((m) => m.replace(/ token=\d+/, "").replace(/root=\d+ /, ""));

describe("one client per cluster per worker (recorded calls)", () => {
  it("a second plugin's redis_init fails the first plugin's call in flight on that worker", async () => {
    const a = await TestHost.create({ wasm: higress, clusters, redisClusters: [RC], configuration: `redis=${RC};user=alice;pass=pw-a` });
    a.stream({ headers: { "x-redis-cmd": "GET k" } }).sendRequestHeaders(true);
    expect(a.redisCalls).toHaveLength(1);
    const b = await a.addPlugin({ wasm: higress, clusters, redisClusters: [RC], configuration: `redis=${RC};user=bob;pass=pw-b` });
    expect(replies(a)).toEqual(["redis_reply status=1 size=0 reply="]);
    expect(a.backend.redisInits.get(`0|${RC}`)?.username).toBe("bob");
    expect(b.backend.redisReinitCloses).toBe(1);
  });

  it("a re-init by another stream of the same plugin fails this stream's call; other workers keep theirs", async () => {
    const h = await TestHost.create({ wasm: higress, clusters, redisClusters: [RC], configuration: `redis=${RC}`, workers: 2 });
    h.stream({ vm: 0, headers: { "x-redis-cmd": "GET a" } }).sendRequestHeaders(true);
    h.stream({ vm: 1, headers: { "x-redis-cmd": "GET b" } }).sendRequestHeaders(true);
    h.stream({ vm: 0, headers: { "x-redis-reinit": "1" } }).sendRequestHeaders(true);
    expect(h.logs("info", { vm: 0 }).map((r) => r.message).filter((m) => m.startsWith("redis_reply"))).toHaveLength(1);
    expect(h.redisCalls.map((c) => c.vm)).toEqual([1]);
  });

  it("Higress >= 2.2.4 (close-if-changed): the same settings again close nothing", async () => {
    const h = await TestHost.create({ wasm: higress, clusters, redisClusters: [RC], configuration: `redis=${RC}`, profile: { redisReinit: "close-if-changed" } });
    h.stream({ headers: { "x-redis-cmd": "GET a" } }).sendRequestHeaders(true);
    h.stream({ headers: { "x-redis-reinit": "1" } }).sendRequestHeaders(true);
    expect(h.redisCalls).toHaveLength(1);
    expect(h.backend.redisReinitCloses).toBe(0);
  });

  it("a call on an existing cluster nobody initialised works with the default 1000 ms timeout", async () => {
    const h = await TestHost.create({ wasm: higress, clusters, redisClusters: [RC] });
    h.stream({ headers: { "x-redis-cmd": "GET k", "x-redis-cluster": RC } }).sendRequestHeaders(true);
    expect(h.logMessages().find((m) => m.startsWith("redis_call"))).toMatch(/status=0/);
    h.advance(999);
    expect(h.redisCalls).toHaveLength(1);
    h.advance(1);
    expect(h.redisHistory[0].timedOut).toBe(true);
  });
});

describe("one client per cluster per worker (real redis)", () => {
  it("the last init's credentials apply to every plugin's calls on the worker", async () => {
    const opts = { wasm: higress, clusters, redisClusters: [RC], redis: { url: server.url } };
    const a = await TestHost.create({ ...opts, configuration: `redis=${RC};user=alice;pass=pw-a` });
    try {
      a.stream({ headers: { "x-redis-cmd": "ACL WHOAMI" } }).sendRequestHeaders(true);
      await a.redisIdle();
      expect(replies(a).at(-1)).toBe("redis_reply status=0 size=11 reply=$5|alice|");
      const b = await a.addPlugin({ ...opts, configuration: `redis=${RC};user=bob;pass=pw-b` });
      a.stream({ headers: { "x-redis-cmd": "ACL WHOAMI" } }).sendRequestHeaders(true);
      await a.redisIdle();
      expect(replies(a).at(-1)).toBe("redis_reply status=0 size=9 reply=$3|bob|");
      expect(replies(b)).toEqual([]);
    } finally {
      a.close();
    }
  });
});

describe("write batching (Envoy raw client)", () => {
  it("init query parameters set the flush timeout and size; Higress < 2.2 ignores them", () => {
    expect(redisSettings(RC, "", "", 50, "honoured")).toMatchObject({ bufferFlushTimeoutMs: 3, maxBufferSizeBeforeFlush: 1024, db: 0 });
    const q = `${RC}?db=2&buffer_flush_timeout=0&max_buffer_size_before_flush=0`;
    expect(redisSettings(q, "", "", 50, "honoured")).toMatchObject({ bufferFlushTimeoutMs: 0, maxBufferSizeBeforeFlush: 0, db: 2 });
    expect(redisSettings(q, "", "", 50, "ignored")).toMatchObject({ bufferFlushTimeoutMs: 3, maxBufferSizeBeforeFlush: 1024 });
  });

  it("a small request waits for the flush timer; reaching the size limit writes the whole buffer", async () => {
    const client = new RedisClusterClient({ host: server.host, port: server.port, timeoutMs: 120_000, bufferFlushTimeoutMs: 60_000, maxBufferSizeBeforeFlush: 1024 });
    try {
      let first: Buffer | null | undefined;
      const p1 = client.call(encodeCommand(["INCR", "batch-counter"])).then((r) => { first = r; });
      await new Promise((r) => setTimeout(r, 150));
      expect(first).toBeUndefined();
      const p2 = client.call(encodeCommand(["SET", "batch-big", "x".repeat(1100)]));
      await p1;
      expect(first?.toString()).toBe(":1\r\n");
      expect((await p2)?.toString()).toBe("+OK\r\n");
    } finally {
      client.close();
    }
  });

  it("a flushed request reaches the socket on the next loop turn, not inside the call (Envoy ConnectionImpl::write)", async () => {
    const client = new RedisClusterClient({ host: server.host, port: server.port, timeoutMs: 5000, bufferFlushTimeoutMs: 60_000, maxBufferSizeBeforeFlush: 0 });
    const write = net.Socket.prototype.write;
    const written: string[] = [];
    try {
      expect((await client.call(encodeCommand(["PING"])))?.toString()).toBe("+PONG\r\n"); // connected
      net.Socket.prototype.write = function (this: net.Socket, ...args: unknown[]) {
        written.push(String(args[0]));
        return (write as (...a: unknown[]) => boolean).apply(this, args);
      } as typeof write;
      const p1 = client.call(encodeCommand(["INCR", "turn-counter"]));
      const p2 = client.call(encodeCommand(["INCR", "turn-counter"]));
      expect(written).toEqual([]); // the guest's callback has not returned yet: nothing on the wire
      await new Promise((r) => setImmediate(r));
      // Both requests went out together, in order, once the loop turned.
      expect(written).toHaveLength(1);
      expect(written[0]).toBe(encodeCommand(["INCR", "turn-counter"]).toString().repeat(2));
      expect((await p1)?.toString()).toBe(":1\r\n");
      expect((await p2)?.toString()).toBe(":2\r\n");
    } finally {
      net.Socket.prototype.write = write;
      client.close();
    }
  });

  it("max_buffer_size_before_flush 0 writes each request at once", async () => {
    const client = new RedisClusterClient({ host: server.host, port: server.port, timeoutMs: 5000, bufferFlushTimeoutMs: 60_000, maxBufferSizeBeforeFlush: 0 });
    try {
      expect((await client.call(encodeCommand(["PING"])))?.toString()).toBe("+PONG\r\n");
    } finally {
      client.close();
    }
  });
});
