// Where a request's candidates come from: the rule's static list, or the routed cluster's hosts
// (Higress's get_upstream_hosts) filtered by allowed health, cached per health filter. Keeps the
// last host snapshot read, since endpoint_metrics reads Higress's per-host metrics from it.
import * as host from "../../host/calls";
import { LbConfig } from "../../config/lb_config";
import { CandidateCache, CandidateSet, makeCandidateSet } from "./candidates";
import { parseUpstreamHosts, HostSnapshot } from "./upstream_hosts";

export class CandidateSource {
  private caches: Map<string, CandidateCache> = new Map();
  private staticSets: Map<usize, CandidateSet> = new Map();
  private lastSnapshot: HostSnapshot | null = null;

  /** Forgets the static lists of the previous configuration. */
  reset(): void { this.staticSets.clear(); }

  /** Registers a rule's static host list (stock Envoy, no Higress host ABI). */
  addStatic(c: LbConfig): void {
    if (c.staticHosts.length > 0) this.staticSets.set(changetype<usize>(c), makeCandidateSet(c.staticHosts));
  }

  /** The request's candidates: the static list, or the routed cluster's allowed hosts. */
  candidatesFor(c: LbConfig): CandidateSet {
    const k = changetype<usize>(c);
    if (this.staticSets.has(k)) return this.staticSets.get(k);
    const raw = host.getUpstreamHosts();
    if (raw === null) return new CandidateSet([], "");
    const snapshot = parseUpstreamHosts(raw);
    this.lastSnapshot = snapshot;
    const cacheKey = c.healthyStatuses.join(",");
    if (!this.caches.has(cacheKey)) this.caches.set(cacheKey, new CandidateCache());
    return this.caches.get(cacheKey).fromSnapshot(snapshot, c.healthyStatuses);
  }

  /** The snapshot read by the last candidatesFor() (metrics live there). */
  snapshot(): HostSnapshot | null { return this.lastSnapshot; }
}
