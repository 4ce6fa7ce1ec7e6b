// How the router picks the upstream host once the request leaves the filter: the override host
// (proxy_set_upstream_override_host) when Envoy accepts it, else the cluster's own load balancer
// over the eligible hosts. Pure logic shared by the facade and the gateway.
// Sources: higress-abi.md "Upstream host selection"; Envoy cluster.proto
// CommonLbConfig.override_host_status (unset -> UNKNOWN, HEALTHY, DEGRADED are honoured);
// Envoy load balancing docs (degraded hosts only take traffic when healthy ones are lacking;
// panic mode ignores health when the healthy share drops under healthy_panic_threshold — Istio,
// and so Higress, disables panic mode by default: threshold 0).
// Failure behaviour: never throws; no eligible host -> { address: null, via: "none" }.
import type { HealthStatusName, UpstreamHostInfo } from "./backend.js";

export const DEFAULT_OVERRIDE_STATUSES: readonly HealthStatusName[] = ["Unknown", "Healthy", "Degraded"];

export interface UpstreamDecision {
  address: string | null;
  via: "override" | "lb" | "none";
  /** Why a requested override was not honoured (null when none was requested or it was honoured). */
  overrideRefused: null | "not_in_cluster" | "status_not_allowed";
}

export interface SelectionPolicy {
  overrideStatuses?: readonly HealthStatusName[];
  /** Percentage of healthy hosts under which panic mode routes to all hosts (0 = never). */
  panicThresholdPercent?: number;
}

/** Hosts the cluster's load balancer may use. */
export function eligibleHosts(hosts: UpstreamHostInfo[], panicThresholdPercent = 0): UpstreamHostInfo[] {
  const healthy = hosts.filter((h) => h.health === "Healthy" || h.health === "Unknown");
  const degraded = hosts.filter((h) => h.health === "Degraded");
  if (hosts.length > 0 && panicThresholdPercent > 0 && (healthy.length * 100) / hosts.length < panicThresholdPercent) {
    return hosts;
  }
  return healthy.length > 0 ? healthy : degraded;
}

export function decideUpstream(
  override: string | null,
  hosts: UpstreamHostInfo[],
  lbPick: (eligible: string[]) => string | null,
  policy: SelectionPolicy = {},
): UpstreamDecision {
  let refused: UpstreamDecision["overrideRefused"] = null;
  if (override !== null) {
    const host = hosts.find((h) => h.address === override);
    const allowed = policy.overrideStatuses ?? DEFAULT_OVERRIDE_STATUSES;
    if (!host) refused = "not_in_cluster";
    else if (!allowed.includes(host.health)) refused = "status_not_allowed";
    else return { address: host.address, via: "override", overrideRefused: null };
  }
  const address = lbPick(eligibleHosts(hosts, policy.panicThresholdPercent).map((h) => h.address));
  return { address, via: address === null ? "none" : "lb", overrideRefused: refused };
}
