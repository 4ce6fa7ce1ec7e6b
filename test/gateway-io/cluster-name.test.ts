// Cluster names as Higress builds them: redis cluster strings with ?db=..., outbound|port||fqdn.
import { describe, expect, it } from "vitest";
import { parseOutboundClusterName, parseRedisClusterName } from "../../host-test/gateway/cluster-name.js";

describe("parseRedisClusterName", () => {
  it("strips the query for the lookup and reads db and the other parameters", () => {
    const parsed = parseRedisClusterName("outbound|6379||redis.static?db=3&buffer_flush_timeout=3&max_buffer_size_before_flush=1024");
    expect(parsed.lookup).toBe("outbound|6379||redis.static");
    expect(parsed.db).toBe(3);
    expect(parsed.params.get("buffer_flush_timeout")).toBe("3");
    expect(parsed.params.get("max_buffer_size_before_flush")).toBe("1024");
  });

  it("uses db 0 without a query, and for an invalid db", () => {
    expect(parseRedisClusterName("outbound|6379||redis.static")).toMatchObject({ lookup: "outbound|6379||redis.static", db: 0 });
    expect(parseRedisClusterName("r?db=-1").db).toBe(0);
    expect(parseRedisClusterName("r?db=x").db).toBe(0);
    expect(parseRedisClusterName("r?buffer_flush_timeout=3").db).toBe(0);
  });
});

describe("parseOutboundClusterName", () => {
  it("parses Higress's outbound|port||fqdn", () => {
    expect(parseOutboundClusterName("outbound|8000||vllm.static")).toEqual({ port: 8000, fqdn: "vllm.static", subset: "" });
  });

  it("keeps an Istio subset and ignores a query suffix", () => {
    expect(parseOutboundClusterName("outbound|80|v1|svc.ns.svc.cluster.local?db=1")).toEqual({
      port: 80, fqdn: "svc.ns.svc.cluster.local", subset: "v1",
    });
  });

  it.each([
    "inbound|8000||vllm.static",
    "outbound|8000|vllm.static",
    "outbound|port||vllm.static",
    "outbound|0||vllm.static",
    "outbound|70000||vllm.static",
    "outbound|8000||",
    "vllm-cluster",
  ])("returns null for %s", (name) => {
    expect(parseOutboundClusterName(name)).toBeNull();
  });
});
