// A request Envoy serves on another pod than the pick (its router ignores the override host on a
// retry, higress-group/envoy source/common/router/router.h overrideHostToSelect; and it does not
// honour an override host that is no longer healthy): the count moves to the pod that serves the
// stream, the picked pod gets no penalty for the other pod's failure, and nothing observed is
// learned as the picked pod's. Real redis-server; the facade's override emulation picks the
// other host when the override host turned unhealthy while the pick waited for Redis.
import { describe, expect, it } from "vitest";
import { CLUSTER, glrConfig, host, hosts, poolLoads, postChat, useRedisHost } from "./harness.js";
import type { TestHost } from "../../host-test/facade/index.js";

const NS = `{llmlb:llm:${CLUSTER}}`;
const t = useRedisHost();
const loads = () => poolLoads(t.client, NS);

/** A stream picked onto the first host, which turns unhealthy before Envoy forwards it. */
async function servedByTheOther(gw: TestHost) {
  const [a, b] = hosts(2);
  await t.client.zadd(`${NS}:load`, 0, a.address, 5, b.address); // the pick goes to a
  const { s } = postChat(gw);
  gw.setUpstreamHosts(CLUSTER, [{ address: a.address, health: "Unhealthy" }, { address: b.address, health: "Healthy" }]);
  await gw.redisIdle();
  expect(s.overrideHost.requested).toBe(a.address);
  expect(s.forwarded!.upstream.address).toBe(b.address);
  return { s, a: a.address, b: b.address };
}

describe("served by another pod than the pick", () => {
  it("the lease moves to the pod that serves the stream, and comes off there at its end", async () => {
    const h = t.host = await host({ configuration: glrConfig({ timeout: 3000, debugHeader: "x-llmlb-debug" }), redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(2) } });
    const { s, a, b } = await servedByTheOther(h);
    expect((await loads())[a]).toBe(1); // counted on the pick until Envoy says where it went
    s.sendResponseHeaders({ ":status": "200" }, false);
    await h.redisIdle();
    expect(s.response.headers["x-llmlb-debug"]).toContain(`served=${b}`);
    const during = await loads();
    expect([during[a], during[b] - 5]).toEqual([0, 1]); // the stream runs on b: its count too
    s.sendResponseBody("data: [DONE]\n\n", true);
    s.complete();
    await h.redisIdle();
    const after = await loads();
    expect([after[a], after[b] - 5]).toEqual([0, 0]);
    expect(await t.client.hlen(`${NS}:lease`)).toBe(0);
  });

  it("a 5xx from the pod that served it is no penalty for the pick; it is the serving pod's, once the lease moved there", async () => {
    const h = t.host = await host({ configuration: glrConfig({ timeout: 3000, failurePenalty: 4 }), redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(2) } });
    const { s, a, b } = await servedByTheOther(h);
    // The 503 ends the stream at once (Envoy doEndStream), while the lease's move to b is still
    // in flight: the move's reply releases it with the stream's failure.
    s.sendResponseHeaders({ ":status": "503" }, true);
    expect(s.ended).toBe("complete");
    await h.redisIdle();
    const after = await loads();
    expect(after[a]).toBe(0);
    expect(after[b] - 5).toBe(4); // failurePenalty, for a while, on the pod that failed
  });
});
