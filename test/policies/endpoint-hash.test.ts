// endpoint_hash through the host facade with a real Redis: a session (hash header) stays on its pod
// turn after turn; it moves when its pod becomes unhealthy or goes over the load gate, and the new
// pod keeps it; requests without the header are least-request picks; compat writes Higress's key
// with stickyTimeout as TTL; bodiless requests are decided at headers (no hang).
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { CLUSTER, host, hosts } from "../plugin/harness.js";
import type { TestHost } from "../../host-test/facade/index.js";

let redis: RedisFixture;
let client: Redis;
let h: TestHost | null = null;
const suite = useRedisSuite();
beforeAll(() => { redis = suite.server; client = suite.redis; });
afterEach(async () => { h?.close(); h = null; await client.flushall(); });

function ehConfig(extra: Record<string, unknown> = {}): object {
  return { lb_policy: "endpoint_hash", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 1000, debugHeader: "x-llmlb-debug", ...extra } };
}

/** A GET (bodiless) with the session header; resolves once the plugin decided. */
async function send(session: string | null, headers: Record<string, string> = {}) {
  const s = h!.stream({ route: "llm", cluster: CLUSTER, method: "GET", path: "/v1/models", headers: session === null ? headers : { "x-mse-consumer": session, ...headers } });
  const action = s.sendRequestHeaders(true);
  await h!.redisIdle();
  s.sendResponseHeaders({ ":status": "200" }, false);
  return { s, action, pod: s.forwarded?.upstream.address ?? "", debug: s.response.headers["x-llmlb-debug"] ?? "" };
}

describe("endpoint_hash", () => {
  it("keeps a session on its pod, decided at request headers (bodiless requests do not hang)", async () => {
    h = await host({ configuration: ehConfig(), redis: { url: redis.url } });
    const first = await send("alice");
    expect(first.action).toBe(1); // held for the one Redis call, then resumed
    expect(first.debug).toContain("reason=sticky_new");
    first.s.complete();
    for (let i = 0; i < 4; i++) {
      const r = await send("alice");
      expect(r.pod).toBe(first.pod);
      expect(r.debug).toContain("reason=sticky_hit");
      r.s.complete();
    }
  });

  it("different sessions spread over the pods (each new session goes to the least-loaded pod)", async () => {
    h = await host({ configuration: ehConfig(), redis: { url: redis.url } });
    const open = [];
    for (const who of ["a", "b", "c", "d"]) open.push(await send(who));
    expect(new Set(open.map((o) => o.pod)).size).toBe(4);
  });

  it("moves off an unhealthy pod; the new pod keeps the session", async () => {
    h = await host({ configuration: ehConfig(), redis: { url: redis.url } });
    const first = await send("bob");
    first.s.complete();
    h.setUpstreamHosts(CLUSTER, hosts(4).map((x) => (x.address === first.pod ? { ...x, health: "Unhealthy" as const } : x)));
    const moved = await send("bob");
    expect(moved.pod).not.toBe(first.pod);
    moved.s.complete();
    h.setUpstreamHosts(CLUSTER, hosts(4));
    const back = await send("bob");
    expect(back.pod).toBe(moved.pod);
    expect(back.debug).toContain("reason=sticky_hit");
  });

  it("moves off a pod over the load gate; the new pod keeps the session", async () => {
    h = await host({ configuration: ehConfig({ loadGateAbs: 1, loadGateRel: 1.5 }), redis: { url: redis.url } });
    const open = [await send("carol")];
    const home = open[0].pod;
    // carol's own open requests load her pod: load 2 > min 0 + 1 and > 1.5 x 0 -> the gate moves her.
    open.push(await send("carol"));
    expect(open[1].pod).toBe(home);
    const moved = await send("carol");
    expect(moved.pod).not.toBe(home);
    expect(moved.debug).toContain("reason=sticky_moved");
    for (const o of [...open, moved]) o.s.complete();
    await h.redisIdle();
    const after = await send("carol");
    expect(after.pod).toBe(moved.pod);
  });

  it("without the header: a least-request pick, no session key", async () => {
    h = await host({ configuration: ehConfig(), redis: { url: redis.url } });
    const r = await send(null);
    expect(r.debug).toContain("reason=least_request");
    expect(await client.keys("*:s:*")).toEqual([]);
  });

  it("compat: Higress's key, value ip:port, TTL stickyTimeout minutes", async () => {
    h = await host({ configuration: ehConfig({ compat: true, stickyTimeout: 2 }), redis: { url: redis.url } });
    const r = await send("foobar");
    const key = `higress:endpoint_hash_table:llm:${CLUSTER}:bf9cf968`; // FNV-1a-32("foobar")
    expect(await client.get(key)).toBe(r.pod);
    const ttl = await client.ttl(key);
    expect(ttl > 100 && ttl <= 120).toBe(true);
  });

  it("needs Redis, as Higress does", async () => {
    h = await host({ configuration: { lb_policy: "endpoint_hash", lb_config: {} } });
    expect(h.configured[0]).toBe(false);
    expect(h.logMessages().join("\n")).toContain("lb_config.serviceFQDN is required for lb_policy endpoint_hash");
  });
});
