// Where a request's candidates come from: the rule's static list, or the routed cluster's hosts
// (Higress's get_upstream_hosts) filtered by allowed health, cached per health filter. Keeps the
// last host snapshot read, since endpoint_metrics reads Higress's per-host metrics from it.
import * as host from "../../host/calls";
import { LbConfig } from "../../config/lb_config";
import { CandidateCache, CandidateSet, makeCandidateSet } from "./candidates";
import { HostMapReads, HostSnapshot, SnapshotCache } from "./upstream_hosts";

export class CandidateSource {
  private caches: Map<string, CandidateCache> = new Map();
  private staticSets: Map<usize, CandidateSet> = new Map();
  private lastSnapshot: HostSnapshot | null = null;
  private snapshots: SnapshotCache = new SnapshotCache();
  private reads: HostMapReads = new HostMapReads();

  /** Forgets the static lists of the previous configuration. */
  reset(): void { this.staticSets.clear(); }

  /** Registers a rule's static host list (stock Envoy, no Higress host ABI). */
  addStatic(c: LbConfig): void {
    if (c.staticHosts.length > 0) this.staticSets.set(changetype<usize>(c), makeCandidateSet(c.staticHosts));
  }

  /** The request's candidates: the static list, or the routed cluster's allowed hosts. */
  candidatesFor(c: LbConfig, cluster: string = ""): CandidateSet {
    const k = changetype<usize>(c);
    if (this.staticSets.has(k)) return this.staticSets.get(k);
    const snapshot = this.hostsOf(c, cluster);
    if (snapshot === null) return new CandidateSet([], "");
    this.lastSnapshot = snapshot;
    const cacheKey = c.healthyStatuses.join(",");
    if (!this.caches.has(cacheKey)) this.caches.set(cacheKey, new CandidateCache());
    return this.caches.get(cacheKey).fromSnapshot(snapshot, c.healthyStatuses);
  }

  /**
   * The routed cluster's host map: read from the host (the whole map is copied in, O(hosts)), or
   * with hostsRefreshMs > 0 the same cluster's map read less than that long ago. A stale map is
   * safe: Envoy honours the override only for a host still in the cluster with an allowed health
   * status, otherwise its own load balancer picks (README "hostsRefreshMs").
   */
  private hostsOf(c: LbConfig, cluster: string): HostSnapshot | null {
    const reuse = c.hostsRefreshMs > 0 && cluster.length > 0;
    const now = reuse ? host.nowMillis() : 0.0;
    if (reuse) {
      const fresh = this.reads.fresh(cluster, now, <f64>c.hostsRefreshMs);
      if (fresh !== null) return fresh;
    }
    const raw = host.getUpstreamHosts();
    const snapshot: HostSnapshot | null = raw === null ? null : this.snapshots.read(raw);
    if (reuse) this.reads.store(cluster, snapshot, now, <f64>c.hostsRefreshMs);
    return snapshot;
  }

  /** The snapshot read by the last candidatesFor() (metrics live there). */
  snapshot(): HostSnapshot | null { return this.lastSnapshot; }
}
