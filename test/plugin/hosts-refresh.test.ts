// hostsRefreshMs: the routed cluster's host map is re-read at most that often per VM (0, the
// default: on every request). A stale map is safe because Envoy honours an override only for a
// host still in the cluster with an allowed health status; otherwise its own load balancer picks.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { useRedisSuite } from "../helpers/redis.js";
import { CLUSTER, glrConfig, host, hosts, postChat } from "./harness.js";
import type { TestHost } from "../../host-test/facade/index.js";

let client: Redis;
let url = "";
let h: TestHost | null = null;
const suite = useRedisSuite();
beforeAll(() => { url = suite.server.url; client = suite.redis; });
afterEach(async () => { h?.close(); h = null; await client.flushall(); });

/** One request's pick: where it went and whether Envoy honoured the plugin's override. */
async function pick(t: TestHost): Promise<{ address: string; via: string }> {
  const { s } = postChat(t);
  await t.redisIdle();
  const up = s.forwarded!.upstream;
  s.sendResponseHeaders({ ":status": "200" }, true);
  s.complete();
  await t.redisIdle();
  return { address: up.address!, via: up.via };
}

const NEW_HOST = [{ address: "10.0.0.9:8000", health: "Healthy" as const }];

describe("hostsRefreshMs", () => {
  it("0 (default): a change of the cluster's hosts is seen by the next request", async () => {
    h = await host({ configuration: glrConfig(), redis: { url }, clusters: { [CLUSTER]: hosts(2) } });
    expect((await pick(h)).via).toBe("override");
    h.setUpstreamHosts(CLUSTER, NEW_HOST);
    expect(await pick(h)).toEqual({ address: "10.0.0.9:8000", via: "override" });
  });

  it("> 0: the last map is reused until it is that old; Envoy's own LB covers a host that left", async () => {
    h = await host({ configuration: glrConfig({ hostsRefreshMs: 1000 }), redis: { url }, clusters: { [CLUSTER]: hosts(2) } });
    const first = await pick(h);
    expect(first.via).toBe("override");
    expect(["10.0.0.1:8000", "10.0.0.2:8000"]).toContain(first.address);
    h.setUpstreamHosts(CLUSTER, NEW_HOST);
    // Within the window the plugin still picks from the old hosts: Envoy refuses the override
    // (not in the cluster) and its load balancer sends the request to the host that is there.
    h.advance(500);
    const stale = await pick(h);
    expect(stale.via).not.toBe("override");
    expect(stale.address).toBe("10.0.0.9:8000");
    h.advance(600);
    expect(await pick(h)).toEqual({ address: "10.0.0.9:8000", via: "override" });
  });

  it("is refused out of range, with a message naming the key", async () => {
    h = await host({ configuration: glrConfig({ hostsRefreshMs: -1 }), redis: { url } });
    expect(h.configured).toEqual([false]);
    expect(h.logMessages().some((m) => m.includes("hostsRefreshMs"))).toBe(true);
  });
});
