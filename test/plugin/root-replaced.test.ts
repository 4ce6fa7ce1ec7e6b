// A configuration update while the old root context's last stream still waits for its acquire:
// the client leaves, the old root (no stream left) is deleted, and Envoy drops the replies of a
// deleted root. The stream's end releases its id at once (with a tombstone, behind the acquire on
// the same connection), so Redis keeps no lease of it. Real redis-server.
import { describe, expect, it } from "vitest";
import { CLUSTER, glrConfig, host, poolLoads, postChat, useRedisHost } from "./harness.js";

const NS = `{llmlb:llm:${CLUSTER}}`;
const t = useRedisHost();
const total = async () => Object.values(await poolLoads(t.client, NS)).reduce((a, b) => a + b, 0);

describe("an acquire out when its stream ends", () => {
  it("on a root replaced by a configuration update, leaves no lease (its reply never reaches the deleted root)", async () => {
    const h = t.host = await host({ configuration: glrConfig(), redis: { url: t.redis.url } });
    const warm = postChat(h).s; // the candidate set and Redis's clock, first
    await h.redisIdle();
    warm.complete();
    await h.redisIdle();
    const { s } = postChat(h); // its acquire is sent, not answered yet
    h.updateConfiguration(glrConfig({ maxRequestCount: 99 }));
    s.abort(); // the old root's last stream: the root is deleted
    await h.redisIdle();
    expect(await total()).toBe(0);
    expect(await t.client.hlen(`${NS}:lease`)).toBe(0); // the acquire ran, then its release: no record left
  });

  it("a stream gone while its acquire is out, on a live root: released once (the late reply's release finds nothing)", async () => {
    const h = t.host = await host({ configuration: glrConfig(), redis: { url: t.redis.url } });
    const { s } = postChat(h);
    s.abort();
    await h.redisIdle();
    expect(await total()).toBe(0);
    const next = postChat(h).s; // the counts are right for the next pick
    await h.redisIdle();
    expect(await total()).toBe(1);
    next.complete();
    await h.redisIdle();
    expect(await total()).toBe(0);
  });
});
