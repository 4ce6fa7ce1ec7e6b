// The cluster's own load balancer: what picks the upstream when the plugin does not pin one with
// proxy_set_upstream_override_host (or pins a host Envoy will not honour; higress-abi.md
// "Upstream host selection").
// Inputs: the eligible hosts ("ip:port") at pick time; onStart/onEnd bracket each request so
// least_request knows the active request counts. Failure behaviour: never throws; no hosts -> null.
// Policies (Envoy docs, intro/arch_overview/upstream/load_balancing/load_balancers):
// - round_robin: each host in turn.
// - least_request (equal weights): "an O(1) algorithm which selects N random available hosts ...
//   (2 by default) and picks the host which has the fewest active requests" — power of two random
//   choices, sampled with replacement as Envoy does; a tie keeps the first sample.
//   https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/load_balancing/load_balancers#weighted-least-request
// - random: a uniformly random host.
// Randomness comes from a seeded PRNG so tests can be reproducible.

export type LbPolicy = "round_robin" | "least_request" | "random";

/** Envoy's default choice_count for LEAST_REQUEST (least_request.proto). */
const LEAST_REQUEST_CHOICES = 2;

/** mulberry32: a small, fast 32-bit PRNG; good enough to spread picks, not for cryptography. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class LocalLoadBalancer {
  private readonly random: () => number;
  private readonly active = new Map<string, number>();
  private rrIndex = 0;

  constructor(readonly policy: LbPolicy, seed: number = (Date.now() ^ (process.pid << 16)) >>> 0) {
    this.random = mulberry32(seed);
  }

  pick(hosts: string[]): string | null {
    if (hosts.length === 0) return null;
    switch (this.policy) {
      case "round_robin":
        return hosts[this.rrIndex++ % hosts.length]!;
      case "random":
        return hosts[this.randomIndex(hosts.length)]!;
      case "least_request":
        return this.pickLeastRequest(hosts);
    }
  }

  /** A request to `host` started (counts toward least_request). */
  onStart(host: string): void {
    this.active.set(host, this.activeRequests(host) + 1);
  }

  /** A request to `host` ended, however it ended. Never goes below zero. */
  onEnd(host: string): void {
    const next = this.activeRequests(host) - 1;
    if (next > 0) this.active.set(host, next);
    else this.active.delete(host);
  }

  activeRequests(host: string): number {
    return this.active.get(host) ?? 0;
  }

  private pickLeastRequest(hosts: string[]): string {
    let best = hosts[this.randomIndex(hosts.length)]!;
    for (let i = 1; i < LEAST_REQUEST_CHOICES; i++) {
      const candidate = hosts[this.randomIndex(hosts.length)]!;
      if (this.activeRequests(candidate) < this.activeRequests(best)) best = candidate;
    }
    return best;
  }

  private randomIndex(n: number): number {
    return Math.floor(this.random() * n);
  }
}
