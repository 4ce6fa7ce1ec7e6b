// What requests would see on one pod of a virtual fleet if they were sent there now and nothing
// else arrived: the pod's engine copied (SimEngine.copyFrom: its requests, KV pool, jitter
// sequence, the step in flight), the requests submitted to the copy in order with the API
// overheads the pod will draw for its next requests, the copy stepped until their last tokens.
// Exact for the engine's own rules; blind only to later arrivals (a request admitted while this
// one decodes stalls its steps with its prefill; one admitted in its first step lengthens it).
// TTFT = first token - now (the client's send), TPOT = (last - first) / (tokens - 1), as the
// SLO benchmarks measure them (bench/slo/virtual-run.ts clientTimes).
// `blind`: the mean of the profile's API overhead instead of the draw the pod will make (what no
// router can know), so the forecast error left is the engines' own noise a router cannot see.
// Failure behaviour: a prompt the pod refuses, or one that never gets a token, forecasts Infinity.
import { SimEngine } from "../../host-test/sim/engine.js";
import type { VirtualFleet } from "../virtual/virtual-fleet.js";

export interface ForecastRequest {
  promptTokens: readonly string[];
  maxTokens: number;
  /** Sent this long after now (default 0); its TTFT counts from then. */
  afterMs?: number;
}

export interface Forecast {
  ttftMs: number;
  /** null for a one-token answer. */
  tpotMs: number | null;
}

const NEVER: Forecast = { ttftMs: Infinity, tpotMs: Infinity };

export class FleetForecaster {
  /** One manual engine every forecast copies a pod into (all pods share the fleet's profile). */
  private readonly scratch: SimEngine;
  /** Forecasts made (a cost figure). */
  count = 0;

  constructor(private readonly fleet: VirtualFleet, private readonly blind = false) {
    this.scratch = new SimEngine({ profile: fleet.profile, mode: "manual" });
  }

  /** Forecasts for `requests` sent to pod `pod` now, in this order. */
  forecast(pod: number, requests: readonly ForecastRequest[]): Forecast[] {
    this.count++;
    const now = this.fleet.now();
    const engine = this.scratch;
    engine.copyFrom(this.fleet.pods[pod].engine);
    const [lo, hi] = this.fleet.profile.apiOverheadMs;
    const overheads = this.blind ? requests.map(() => (lo + hi) / 2) : this.fleet.nextApiOverheads(pod, requests.length);
    const sims = requests.map((r, k) => this.fleet.accepts(r.promptTokens, r.maxTokens)
      ? engine.submit({ promptTokens: r.promptTokens, maxTokens: r.maxTokens, ignoreEos: true, arrivalMs: now + (r.afterMs ?? 0), apiOverheadMs: overheads[k] })
      : null);
    while (sims.some((s) => s !== null && s.status !== "finished") && engine.step());
    return sims.map((s) => {
      if (s === null || s.firstTokenMs === null || s.lastTokenMs === null) return NEVER;
      const n = s.outputTokens;
      return { ttftMs: s.firstTokenMs - s.arrivalMs, tpotMs: n > 1 ? (s.lastTokenMs - s.firstTokenMs) / (n - 1) : null };
    });
  }
}
