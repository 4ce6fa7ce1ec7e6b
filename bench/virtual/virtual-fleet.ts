// The simulated pods of a virtual run: one SimEngine per pod in virtual mode on the run's event
// clock (no HTTP server), addressed as `10.0.x.y:8000` so the plugin sees ordinary endpoints.
// Like host-test/sim/server.ts: pod i has seed `seed + i`, its API overhead is drawn from the
// profile's range with that pod's seeded generator, a prompt that cannot fit is refused (400).
// With health checks on, every pod's /metrics text is re-rendered every `metricsIntervalMs` of
// virtual time (Higress hands the last body to the plugin, as the gateway's health checker does).
// Failure behaviour: submit() returns null for a request the pod refuses; nothing throws.
import type { UpstreamHostInfo } from "../../host-test/abi/backend.js";
import { SimEngine } from "../../host-test/sim/engine.js";
import { renderMetrics } from "../../host-test/sim/metrics.js";
import { resolveProfile, type SimProfile } from "../../host-test/sim/profiles.js";
import { SeededRandom } from "../../host-test/sim/random.js";
import type { SimRequest } from "../../host-test/sim/request.js";
import type { EventClock } from "./event-clock.js";

export interface VirtualFleetSpec {
  pods: number;
  profile: string;
  profileOverrides?: Partial<SimProfile>;
  seed: number;
  /** Virtual ms between /metrics renders; 0 = no health checks (empty bodies). */
  metricsIntervalMs: number;
}

export interface VirtualPod {
  name: string;
  address: string;
  engine: SimEngine;
  rng: SeededRandom;
}

export function podAddress(i: number): string {
  return `10.0.${i >> 8}.${i & 255}:8000`;
}

export class VirtualFleet {
  readonly pods: VirtualPod[] = [];
  readonly profile: SimProfile;
  private readonly byAddress = new Map<string, number>();
  private hosts: UpstreamHostInfo[];
  private cancelRender: (() => void) | null = null;

  constructor(private readonly clock: EventClock, spec: VirtualFleetSpec) {
    this.profile = resolveProfile(spec.profile, spec.profileOverrides);
    for (let i = 0; i < spec.pods; i++) {
      const seed = spec.seed + i;
      const engine = new SimEngine({ profile: this.profile, mode: "virtual", clock, seed });
      const pod = { name: `pod-${i}`, address: podAddress(i), engine, rng: new SeededRandom(seed ^ 0x9e3779b9) };
      this.pods.push(pod);
      this.byAddress.set(pod.address, i);
    }
    this.hosts = this.pods.map((p) => ({ address: p.address, health: "Healthy", metrics: "" }));
    if (spec.metricsIntervalMs > 0) this.renderEvery(spec.metricsIntervalMs);
  }

  /** What get_upstream_hosts returns: every pod healthy, with its last /metrics body. */
  upstreamHosts(): UpstreamHostInfo[] { return this.hosts; }

  indexOf(address: string): number { return this.byAddress.get(address) ?? -1; }

  /** Whether a pod takes this prompt (else submit refuses it, as a 400). */
  accepts(promptTokens: readonly string[], maxTokens: number): boolean {
    return promptTokens.length > 0 && promptTokens.length + maxTokens <= this.profile.maxModelLen;
  }

  /** Hands a prompt to pod `index` now; null when the pod refuses it (too long, as a 400). */
  submit(index: number, promptTokens: readonly string[], maxTokens: number): SimRequest | null {
    const pod = this.pods[index];
    if (!this.accepts(promptTokens, maxTokens)) return null;
    return pod.engine.submit({ promptTokens, maxTokens, ignoreEos: true, arrivalMs: this.clock.now(), apiOverheadMs: this.apiOverhead(pod.rng) });
  }

  /** The API overheads pod `index` will give its next `n` requests (its generator is not advanced). */
  nextApiOverheads(index: number, n: number): number[] {
    const rng = this.pods[index].rng.clone();
    return Array.from({ length: n }, () => this.apiOverhead(rng));
  }

  now(): number {
    return this.clock.now();
  }

  private apiOverhead(rng: SeededRandom): number {
    const [lo, hi] = this.profile.apiOverheadMs;
    return rng.uniform(lo, hi);
  }

  close(): void {
    this.cancelRender?.();
    for (const p of this.pods) p.engine.close();
  }

  private renderEvery(intervalMs: number): void {
    const render = () => {
      this.hosts = this.pods.map((p) => ({
        address: p.address,
        health: "Healthy",
        metrics: renderMetrics(p.engine.snapshot(), { flavor: "vllm", modelName: this.profile.modelName }),
      }));
      this.cancelRender = this.clock.after(intervalMs, render);
    };
    render();
  }
}
