// Active HTTP health checks of one static cluster, keeping the last passing check's body: Higress
// hands it to the plugin as the host's `metrics` (higress-abi.md "Upstream host selection").
// Inputs: the cluster (endpoints + health_check). Output: snapshot() of every host's health and
// body; onChange(address, status) on each transition. Failure behaviour: never throws; a failing
// or unreachable host is a health state, not an error.
// Emulated Envoy semantics (envoyproxy/envoy source/common/upstream/health_checker_impl.cc and
// upstream_impl.cc; https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/health_checking):
// - Hosts of a cluster with active health checking START UNHEALTHY: upstream_impl.cc sets
//   FAILED_ACTIVE_HC on every host when a health checker is configured ("If we are depending on a
//   health checker, we initialize to unhealthy"), so no traffic reaches a host before it passed.
// - The FIRST passing check marks a host healthy at once (Envoy: "makes startup faster");
//   afterwards an unhealthy host needs `healthy_threshold` consecutive passes.
// - A check passes on HTTP 200. A response with another status is an "active" failure: Envoy marks
//   the host unhealthy immediately (the upstream asked to be taken out). Timeouts and connection
//   errors are "network" failures: `unhealthy_threshold` consecutive ones are needed.
// - A passing response carrying `x-envoy-degraded` marks the host Degraded (Envoy's
//   DEGRADED_ACTIVE_HC); a passing response without it clears that.
// - The next check of a host is scheduled `interval_ms` after the previous one completed
//   (Envoy re-arms the interval timer per host after each result); the first runs on start().
// - "Timeout" is an EDS-reported status in Envoy; active checks never produce it (a timed-out
//   check is a network failure), so this checker reports Healthy, Degraded or Unhealthy.
// Body: kept only when the check path is /metrics (higress-abi.md), at most 64 KiB, from the last
// passing check (a failed check keeps the previous body). No health_check -> every host Healthy
// with an empty body, and start/stop/checkNow do nothing.
import type { ClusterConfig, HealthCheckConfig } from "./config.js";

export type HealthStatus = "Healthy" | "Unhealthy" | "Timeout" | "Degraded";

export interface HostHealth {
  address: string;
  health: HealthStatus;
  body: string;
}

export interface HealthCheckerOptions {
  /** Defaults to the global fetch (Node's undici). */
  fetchImpl?: typeof fetch;
  onChange?(address: string, status: HealthStatus): void;
}

/** Higress keeps at most 64 KiB of a health check body (higress-abi.md). */
export const MAX_HEALTH_BODY_BYTES = 64 * 1024;

/** Higress stores the body when the cluster's health check points at /metrics (higress-abi.md). */
export function keepsHealthCheckBody(checkPath: string): boolean {
  return checkPath.split("?")[0] === "/metrics";
}

type CheckResult =
  | { kind: "pass"; degraded: boolean; body: string }
  | { kind: "active_failure" } // a response, but not 200
  | { kind: "network_failure" }; // timeout, refused, reset

interface HostState {
  address: string;
  failedActiveHc: boolean;
  degraded: boolean;
  firstCheck: boolean;
  consecutivePasses: number;
  consecutiveNetworkFailures: number;
  body: string;
  inFlight: Promise<void> | null;
  timer: NodeJS.Timeout | null;
}

export class HealthChecker {
  private readonly hc: HealthCheckConfig | null;
  private readonly hosts: HostState[];
  private readonly fetchImpl: typeof fetch;
  private readonly keepBody: boolean;
  private running = false;
  /** Aborts every in-flight check on stop(). */
  private aborter = new AbortController();

  constructor(cluster: ClusterConfig, private readonly opts: HealthCheckerOptions = {}) {
    this.hc = cluster.health_check;
    this.fetchImpl = opts.fetchImpl ?? fetch;
    this.keepBody = this.hc !== null && keepsHealthCheckBody(this.hc.path);
    this.hosts = cluster.endpoints.map((address) => ({
      address,
      failedActiveHc: this.hc !== null,
      degraded: false,
      firstCheck: true,
      consecutivePasses: 0,
      consecutiveNetworkFailures: 0,
      body: "",
      inFlight: null,
      timer: null,
    }));
  }

  /** Runs a first round now, then re-checks each host interval_ms after its previous check. */
  start(): void {
    if (this.hc === null || this.running) return;
    this.running = true;
    for (const host of this.hosts) void this.checkHost(host);
  }

  stop(): void {
    this.running = false;
    // Checks in flight see their (old) signal aborted and drop their result; a later checkNow or
    // start() uses a fresh signal.
    this.aborter.abort();
    this.aborter = new AbortController();
    for (const host of this.hosts) {
      if (host.timer) clearTimeout(host.timer);
      host.timer = null;
    }
  }

  snapshot(): HostHealth[] {
    return this.hosts.map((h) => ({ address: h.address, health: this.statusOf(h), body: h.body }));
  }

  /** Checks every host now (joining checks already in flight) and resolves when all are done. */
  async checkNow(): Promise<void> {
    if (this.hc === null) return;
    await Promise.all(this.hosts.map((h) => this.checkHost(h)));
  }

  private statusOf(h: HostState): HealthStatus {
    if (h.failedActiveHc) return "Unhealthy";
    return h.degraded ? "Degraded" : "Healthy";
  }

  private checkHost(host: HostState): Promise<void> {
    if (host.inFlight) return host.inFlight;
    if (host.timer) clearTimeout(host.timer);
    host.timer = null;
    const signal = this.aborter.signal;
    host.inFlight = this.probe(host.address, signal).then((result) => {
      host.inFlight = null;
      if (signal.aborted) return; // stopped meanwhile: the result no longer counts
      this.apply(host, result);
      if (this.running) {
        host.timer = setTimeout(() => void this.checkHost(host), this.hc!.interval_ms);
        host.timer.unref();
      }
    });
    return host.inFlight;
  }

  /** Envoy's handleSuccess / setUnhealthy state machine, one result at a time. */
  private apply(host: HostState, result: CheckResult): void {
    const before = this.statusOf(host);
    const hc = this.hc!;
    if (result.kind === "pass") {
      host.consecutiveNetworkFailures = 0;
      if (host.failedActiveHc && (host.firstCheck || ++host.consecutivePasses >= hc.healthy_threshold)) {
        host.failedActiveHc = false;
      }
      host.degraded = result.degraded;
      if (this.keepBody) host.body = result.body;
    } else {
      host.consecutivePasses = 0;
      if (!host.failedActiveHc) {
        const network = result.kind === "network_failure";
        if (!network || ++host.consecutiveNetworkFailures >= hc.unhealthy_threshold) host.failedActiveHc = true;
      }
    }
    if (host.failedActiveHc) host.consecutiveNetworkFailures = 0;
    host.firstCheck = false;
    const after = this.statusOf(host);
    if (after !== before) this.opts.onChange?.(host.address, after);
  }

  /** One GET of the check path; the timeout covers connect, headers and the body read. */
  private async probe(address: string, stopSignal: AbortSignal): Promise<CheckResult> {
    const hc = this.hc!;
    const signal = AbortSignal.any([stopSignal, AbortSignal.timeout(hc.timeout_ms)]);
    try {
      const res = await this.fetchImpl(`http://${address}${hc.path}`, {
        signal,
        headers: { "user-agent": "Envoy/HC" }, // the user agent Envoy's HTTP health checker sends
      });
      if (res.status !== 200) {
        await res.body?.cancel().catch(() => undefined);
        return { kind: "active_failure" };
      }
      const body = this.keepBody ? await readCapped(res, MAX_HEALTH_BODY_BYTES) : "";
      if (!this.keepBody) await res.body?.cancel().catch(() => undefined);
      return { kind: "pass", degraded: res.headers.has("x-envoy-degraded"), body };
    } catch {
      return { kind: "network_failure" };
    }
  }
}

/** Reads at most `limit` bytes of the body, then drops the rest of the stream. */
async function readCapped(res: Response, limit: number): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (total < limit) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.length;
  }
  if (total >= limit) await reader.cancel().catch(() => undefined);
  return Buffer.concat(chunks).subarray(0, limit).toString("utf8");
}
