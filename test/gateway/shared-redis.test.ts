// Two Wasm plugins on one gateway (Higress: two WasmPlugins) that use the same Redis cluster name
// with different credentials, as Envoy runs them (audit row 3): each worker has ONE client for
// the cluster, shared by both plugins; the last proxy_redis_init on a worker decides the
// credentials for everyone there, and closes the connection under the other plugin's calls.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { startGateway, type Gateway } from "../../host-test/gateway/server.js";
import { parseGatewayConfig } from "../../host-test/gateway/config.js";
import { startRedis, type RedisFixture } from "../helpers/redis.js";
import { startUpstream, type Upstream } from "../helpers/upstreams.js";
import { buildGuest } from "../host/guests/build.js";
import { gatewayConfig, request } from "./gateway-helpers.js";

const REDIS = "outbound|6379||redis.static";
const POOL = "outbound|8000||vllm.static";
let up: Upstream;
let redis: RedisFixture;
let admin: Redis;
let gw: Gateway;

beforeAll(async () => {
  const wasm = await buildGuest("higress-100");
  redis = await startRedis();
  admin = new Redis(redis.port, redis.host);
  await admin.call("ACL", "SETUSER", "alice", "on", ">pw-a", "~*", "+@all");
  await admin.call("ACL", "SETUSER", "bob", "on", ">pw-b", "~*", "+@all");
  up = await startUpstream();
  const bob = parseGatewayConfig(JSON.stringify({ clusters: [{ name: POOL, endpoints: [up.address] }], plugin: { wasm, configuration: { cfg: `redis=${REDIS};user=bob;pass=pw-b` } } }), process.cwd()).plugin!;
  gw = await startGateway(gatewayConfig({
    workers: 1,
    clusters: [{ name: POOL, endpoints: [up.address] }, { name: REDIS, type: "redis", endpoints: [`${redis.host}:${redis.port}`] }],
    routes: [{ name: "bob", match: { prefix: "/bob" }, cluster: POOL }, { name: "alice", match: { prefix: "/" }, cluster: POOL }],
    plugin: { wasm, configuration: { cfg: `redis=${REDIS};user=alice;pass=pw-a` } },
  }), { extraPlugins: [{ plugin: bob, routes: ["bob"], pluginName: "bob" }] });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
  admin?.disconnect();
  await redis?.stop();
});

const whoami = (gwUrl: string, path: string) => request(gwUrl, { path, headers: { "x-redis-cmd": "ACL WHOAMI" } });
const lastReply = (logs: string[]) => logs.filter((m) => m.startsWith("redis_reply")).at(-1);

describe("two plugins, one Redis cluster name, different credentials", () => {
  it("the plugin that initialised last decides the credentials of both", async () => {
    expect((await whoami(gw.url, "/chat")).status).toBe(200);
    expect((await whoami(gw.url, "/bob/chat")).status).toBe(200);
    expect(lastReply(gw.plugin!.logs.records.map((r) => r.message))).toMatch(/reply=\$3\|bob\|$/);
    expect(lastReply(gw.extraPlugins[0].logs.records.map((r) => r.message))).toMatch(/reply=\$3\|bob\|$/);
  });

  it("a re-init by one plugin fails the other plugin's call in flight (NetworkError)", async () => {
    // Left alone, BLPOP would answer nil (status 0) after 0.6 s, within the 1 s op timeout.
    const blocked = request(gw.url, { path: "/chat", headers: { "x-redis-cmd": "BLPOP never-filled 0.6" } });
    // Until Redis holds the BLPOP (polled: a slow machine takes longer than a fixed wait).
    const by = Date.now() + 3000;
    while (Date.now() < by && !/blocked_clients:[1-9]/.test(await admin.info("clients"))) await new Promise((r) => setTimeout(r, 5));
    expect(await admin.info("clients")).toMatch(/blocked_clients:[1-9]/);
    await request(gw.url, { path: "/bob/x", headers: { "x-redis-reinit": "1" } });
    expect((await blocked).status).toBe(200);
    expect(lastReply(gw.plugin!.logs.records.map((r) => r.message))).toMatch(/status=1 size=0/);
    expect(gw.backend.redis.reinitCloses).toBeGreaterThanOrEqual(1);
  });
});
