// The proxy_redis_call connection against a real redis-server: raw bytes in and out, lazy connect,
// AUTH and SELECT on every new connection, FIFO pipelining, Envoy's op timeout, outage/recovery.
import net from "node:net";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RedisClusterClient, type RedisClusterClientOptions } from "../../host-test/gateway/redis-client.js";
import { encodeCommand, parseReply } from "../../host-test/resp.js";
import { freePort } from "../helpers/ports.js";
import { startRedis, type RedisFixture } from "../helpers/redis.js";

let redis: RedisFixture;
let admin: Redis;
const clients: RedisClusterClient[] = [];

function client(extra: Partial<RedisClusterClientOptions> = {}): RedisClusterClient {
  const c = new RedisClusterClient({ host: redis.host, port: redis.port, timeoutMs: 2000, ...extra });
  clients.push(c);
  return c;
}

/** Sends a command and decodes the raw reply (null = NetworkError). */
async function cmd(c: RedisClusterClient, ...args: Array<string | number | Buffer>) {
  const raw = await c.call(encodeCommand(args));
  return raw === null ? null : parseReply(raw);
}

async function connectedClients(): Promise<number> {
  const info = await admin.info("clients");
  return Number(/connected_clients:(\d+)/.exec(info)![1]);
}

async function until(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis({ host: redis.host, port: redis.port, lazyConnect: true, maxRetriesPerRequest: 1 });
  await admin.connect();
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  if (admin.status === "ready") {
    await admin.config("SET", "requirepass", "");
    await admin.flushall();
  }
});

afterAll(async () => {
  admin.disconnect();
  await redis.stop();
});

describe("RedisClusterClient", () => {
  it("connects lazily, on the first call", async () => {
    const before = await connectedClients();
    const c = client();
    await new Promise((r) => setTimeout(r, 50));
    expect(c.connected).toBe(false);
    expect(await connectedClients()).toBe(before);
    expect(await cmd(c, "PING")).toBe("PONG");
    expect(c.connected).toBe(true);
    expect(await connectedClients()).toBe(before + 1);
  });

  it("forwards raw query bytes and returns the raw bytes of exactly one reply", async () => {
    const c = client();
    expect((await c.call(Buffer.from("*3\r\n$3\r\nSET\r\n$3\r\nfoo\r\n$3\r\nbar\r\n")))!.toString()).toBe("+OK\r\n");
    expect((await c.call(encodeCommand(["GET", "foo"])))!.toString()).toBe("$3\r\nbar\r\n");
    expect((await c.call(encodeCommand(["GET", "missing"])))!.toString()).toBe("$-1\r\n");
    expect((await c.call(encodeCommand(["INCRBY", "n", 5])))!.toString()).toBe(":5\r\n");
    expect((await c.call(encodeCommand(["NOSUCHCOMMAND"])))!.toString()).toMatch(/^-ERR unknown command/);
  });

  it("keeps binary values intact and frames nested array replies", async () => {
    const c = client();
    const value = Buffer.from([0x00, 0x0d, 0x0a, 0x24, 0x2a, 0xff, 0x0d, 0x0a]);
    await cmd(c, "SET", "bin", value);
    const raw = (await c.call(encodeCommand(["GET", "bin"])))!;
    expect(Buffer.concat([Buffer.from("$8\r\n"), value, Buffer.from("\r\n")]).equals(raw)).toBe(true);
    const nested = await cmd(c, "EVAL", "return {1, {2, 'x', {}}, redis.call('PING'), redis.pcall('NOPE')}", 0);
    expect(nested).toHaveLength(4);
    expect((nested as unknown[]).slice(0, 3)).toEqual([1, [2, "x", []], "PONG"]);
  });

  it("SELECTs the configured db on the connection", async () => {
    const db3 = client({ db: 3 });
    const db0 = client();
    await cmd(db3, "SET", "where", "db3");
    expect(await cmd(db0, "GET", "where")).toBeNull();
    expect(await admin.select(3).then(() => admin.get("where"))).toBe("db3");
    await admin.select(0);
  });

  it("pipelines 1000 concurrent calls and matches every reply to its call", async () => {
    const c = client();
    const payload = (i: number) => `v${i}:` + "x".repeat(i % 7 === 0 ? 70_000 : i % 50); // some replies span many TCP chunks
    const echoes = Array.from({ length: 1000 }, (_, i) => cmd(c, "ECHO", payload(i)));
    const incrs = Array.from({ length: 1000 }, () => cmd(c, "INCR", "seq"));
    const echoed = await Promise.all(echoes);
    echoed.forEach((reply, i) => expect(reply).toBe(payload(i)));
    expect(await Promise.all(incrs)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(await connectedClients()).toBe(2); // admin + this one connection: pipelined, not pooled
  });

  it("sends AUTH with the password on each new connection", async () => {
    await admin.config("SET", "requirepass", "s3cret");
    await admin.auth("s3cret");
    const c = client({ password: "s3cret" });
    expect(await cmd(c, "PING")).toBe("PONG");
    const id = (await cmd(c, "CLIENT", "ID")) as number;
    await admin.client("KILL", "ID", String(id));
    await until(() => !c.connected, "the killed connection to close");
    expect(await cmd(c, "PING")).toBe("PONG"); // a fresh connection, authenticated again
    expect(await cmd(c, "CLIENT", "ID")).not.toBe(id);
  });

  it("sends AUTH user pass when a username is set, then SELECT", async () => {
    await admin.call("ACL", "SETUSER", "alice", "on", ">pw", "~*", "&*", "+@all");
    const c = client({ username: "alice", password: "pw", db: 2 });
    expect(await cmd(c, "ACL", "WHOAMI")).toBe("alice");
    await cmd(c, "SET", "k", "v");
    expect(await admin.select(2).then(() => admin.get("k"))).toBe("v");
    await admin.select(0);
    await admin.call("ACL", "DELUSER", "alice");
  });

  it("swallows a failing AUTH like Envoy: calls then get the server's NOAUTH error reply, not NetworkError", async () => {
    await admin.config("SET", "requirepass", "s3cret");
    await admin.auth("s3cret");
    const wrong = await cmd(client({ password: "wrong" }), "GET", "k");
    expect(wrong).toMatchObject({ message: expect.stringMatching(/^NOAUTH/) });
    const none = await cmd(client(), "GET", "k");
    expect(none).toMatchObject({ message: expect.stringMatching(/^NOAUTH/) });
  });

  it("on op timeout closes the connection: every pending call fails, the late reply is never delivered", async () => {
    const c = client({ timeoutMs: 500 });
    expect(await cmd(c, "SET", "k", "before")).toBe("OK");
    // BLPOP blocks this connection for 1.5 s (DEBUG SLEEP is disabled by default on Redis 7).
    const blocked = cmd(c, "BLPOP", "never", "1.5");
    const behind = cmd(c, "GET", "k"); // pipelined behind the blocked call
    expect(await blocked).toBeNull();
    expect(await behind).toBeNull();
    expect(c.connected).toBe(false);
    // The next call reconnects and gets ITS reply, also after the server answered the old BLPOP.
    expect(await cmd(c, "ECHO", "after-1")).toBe("after-1");
    await new Promise((r) => setTimeout(r, 1200));
    expect(await cmd(c, "ECHO", "after-2")).toBe("after-2");
    expect(await cmd(c, "GET", "k")).toBe("before");
  });

  it("re-arms the op timer on every reply: a pipeline may outlast the timeout if replies keep coming", async () => {
    const c = client({ timeoutMs: 1000 });
    // Four 0.4 s blocking calls in one pipeline: 1.6 s in all, never 1 s without a reply.
    const replies = await Promise.all(Array.from({ length: 4 }, () => cmd(c, "BLPOP", "never", "0.4")));
    expect(replies).toEqual([null, null, null, null]); // null array = BLPOP timed out server-side
    expect(c.connected).toBe(true);
  });

  it("op timeout 0 is a 0 ms timer, not none: every call fails, even to a Redis on this machine that answers at once", async () => {
    let accepted = 0;
    const counting = net.createServer((sock) => { accepted++; sock.on("data", () => sock.write("+PONG\r\n")); });
    await new Promise<void>((r) => counting.listen(0, "127.0.0.1", () => r()));
    try {
      const port = (counting.address() as net.AddressInfo).port;
      const c = new RedisClusterClient({ host: "127.0.0.1", port, timeoutMs: 0, connectTimeoutMs: 1000 });
      clients.push(c);
      for (let i = 0; i < 5; i++) expect(await cmd(c, "PING")).toBeNull();
      expect(accepted).toBe(5); // each call connected, then its op timer fired before any reply was read
    } finally {
      counting.close();
    }
  });

  it("fails calls during an outage and recovers when the server is back", async () => {
    const own = await startRedis();
    try {
      const c = new RedisClusterClient({ host: own.host, port: own.port, timeoutMs: 1000 });
      clients.push(c);
      expect(await cmd(c, "PING")).toBe("PONG");
      const pending = cmd(c, "BLPOP", "never", "5");
      await own.stop();
      expect(await pending).toBeNull();
      expect(await cmd(c, "PING")).toBeNull(); // refused while down
      expect(c.connected).toBe(false);
      await own.start();
      expect(await cmd(c, "PING")).toBe("PONG");
    } finally {
      await own.stop();
    }
  });

  it("fails a call to a port nobody listens on, and one to an unreachable address within the connect timeout", async () => {
    const dead = new RedisClusterClient({ host: "127.0.0.1", port: await freePort(), timeoutMs: 500 });
    clients.push(dead);
    expect(await cmd(dead, "PING")).toBeNull();
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never routed; the connect either hangs or is refused.
    const blackhole = new RedisClusterClient({ host: "192.0.2.1", port: 6379, timeoutMs: 10_000, connectTimeoutMs: 200 });
    clients.push(blackhole);
    expect(await cmd(blackhole, "PING")).toBeNull();
  });

  it("treats a malformed reply as a protocol error: the call fails and the next one reconnects", async () => {
    let connections = 0;
    const server = net.createServer((sock) => {
      connections++;
      const first = connections === 1;
      sock.on("data", () => sock.write(first ? "?garbage\r\n" : "+PONG\r\n"));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const c = new RedisClusterClient({ host: "127.0.0.1", port: (server.address() as net.AddressInfo).port, timeoutMs: 1000 });
      clients.push(c);
      expect(await cmd(c, "PING")).toBeNull();
      expect(await cmd(c, "PING")).toBe("PONG");
      expect(connections).toBe(2);
    } finally {
      server.close();
    }
  });

  it("close() fails pending calls and every later call", async () => {
    const c = client();
    const pending = cmd(c, "BLPOP", "never", "1");
    await until(() => c.connected, "the connection");
    c.close();
    expect(await pending).toBeNull();
    expect(await cmd(c, "PING")).toBeNull();
  });
});
