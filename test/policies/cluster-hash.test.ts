// cluster_hash through the host facade (release .wasm): every request's cluster header equals what
// the independent TypeScript statement of Higress's algorithm picks; no hash header -> 403
// "hash header required" (Higress's answer); the configuration is validated as Higress does.
import { afterEach, describe, expect, it } from "vitest";
import { TestHost } from "../../host-test/facade/index.js";
import { higressClusterFor, type ClusterEntry } from "../helpers/higress-cluster-hash.js";
import { WASM } from "../plugin/harness.js";

const CLUSTERS: ClusterEntry[] = [
  { cluster: "outbound|80||llm-test1.internal.static", weight: 69 },
  { cluster: "outbound|443||llm-test2.internal.dns", weight: 30 },
  { cluster: "outbound|443||llm-test3.internal.dns", weight: 1 },
];
let h: TestHost | null = null;
afterEach(() => { h?.close(); h = null; });

async function hashHost(lbConfig: Record<string, unknown>): Promise<TestHost> {
  return TestHost.create({ wasm: WASM, configuration: { lb_type: "cluster", lb_policy: "cluster_hash", lb_config: lbConfig }, logLevel: "info" });
}

describe("cluster_hash", () => {
  it("writes Higress's pick for every key into the cluster header, at request headers", async () => {
    h = await hashHost({ clusters: CLUSTERS });
    const seen = new Set<string>();
    const enc = (k: string) => new TextEncoder().encode(k);
    // A key of the weight-1 cluster, found with the reference, so all three clusters are exercised.
    const rare = Array.from({ length: 5000 }, (_, i) => `rare-${i}`).find((k) => higressClusterFor(CLUSTERS, enc(k)) === CLUSTERS[2].cluster)!;
    const keys = [rare, ...Array.from({ length: 200 }, (_, i) => (i % 7 === 0 ? `用户-${i}` : `consumer-${i}`))];
    for (const key of keys) {
      const s = h.stream({ route: "llm", cluster: null, method: "POST", headers: { "x-mse-consumer": key } });
      expect(s.sendRequestHeaders(false)).toBe(0); // Continue: decided from headers, body flows
      const want = higressClusterFor(CLUSTERS, enc(key));
      expect(s.requestHeaders["x-higress-target-cluster"]).toBe(want);
      seen.add(want);
      s.complete();
    }
    expect(seen.size).toBe(3);
  });

  it("custom hash_header and cluster_header; the same key always maps to the same cluster", async () => {
    h = await hashHost({ clusters: CLUSTERS, hash_header: "X-Session", cluster_header: "x-target" });
    const picks = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const s = h.stream({ headers: { "x-session": "alice" } });
      s.sendRequestHeaders(true);
      picks.add(s.requestHeaders["x-target"]);
    }
    expect([...picks]).toEqual([higressClusterFor(CLUSTERS, new TextEncoder().encode("alice"))]);
  });

  it("no hash header, or an empty one: 403 'hash header required', nothing forwarded", async () => {
    h = await hashHost({ clusters: CLUSTERS });
    for (const headers of [{}, { "x-mse-consumer": "" }] as Array<Record<string, string>>) {
      const s = h.stream({ headers });
      s.sendRequestHeaders(true);
      expect(s.localResponse?.status).toBe(403);
      expect(s.localResponse?.body.toString()).toBe("hash header required");
      expect(s.forwarded).toBeNull();
    }
  });

  it.each([
    ["no clusters", {}, "lb_config.clusters must be a non-empty list of {cluster, weight}"],
    ["an empty list", { clusters: [] }, "lb_config.clusters must be a non-empty list of {cluster, weight}"],
    ["a missing cluster name", { clusters: [{ weight: 100 }] }, "lb_config.clusters[0].cluster must be a non-empty string"],
    ["a zero weight", { clusters: [{ cluster: "a", weight: 0 }, { cluster: "b", weight: 100 }] }, "lb_config.clusters[0].weight must be an integer in [1, 100], got 0"],
    ["weights not summing to 100", { clusters: [{ cluster: "a", weight: 60 }, { cluster: "b", weight: 30 }] }, "lb_config.clusters weights must sum to 100, got 90"],
  ])("refuses %s, naming the key", async (_name, lbConfig, message) => {
    h = await hashHost(lbConfig);
    expect(h.configured[0]).toBe(false);
    expect(h.logMessages().join("\n")).toContain(message);
  });
});
