// The SLO oracle: a central picker (virtual time only) that knows, for every pod, the exact TTFT
// and TPOT a request would get if sent there now and nothing else arrived (forecast.ts: the pod's
// engine forked and run forward), and chooses with them (oracle-choice.ts): `tpot_fit`, the
// plugin's default rule on exact values; `protect`, among the pods meeting the SLO the one after
// which the most probes (tight requests sent 0-800 ms later) could still be served; `trade`, the
// same score where 3 probes outweigh this request's own SLO; `fastest`, the lowest TTFT, SLOs ignored. Exact knowledge of the
// engines' present state, none of later arrivals, and a greedy rule: a reference, not a bound
// (predicted_latency beat slo_oracle on slo-hetero seed 12: 84.6% vs 83.7%, bench/RESULTS.md 3b).
// The SLO comes from the request's headers exactly as predicted_latency reads them
// (x-slo-ttft-ms / x-slo-tpot-ms, a positive number, else none). The probes: the last request
// seen of each output length among the tightest TTFT SLO seen so far (at most 4 shapes), each
// sent at every PROBE_OFFSETS_MS after this one.
// Debug (the outcome's debug field): `slo_oracle:<reason>:ttft=<ms>:tpot=<ms>`, the chosen pod's forecast.
// Failure behaviour: never throws; a body it cannot read is forecast as a 1-token prompt.
import { promptTokens, maxTokensOf } from "../omniscient-picker.js";
import type { Pick, Picker } from "../picker-proxy.js";
import type { VirtualFleet } from "../virtual/virtual-fleet.js";
import { FleetForecaster, type Forecast, type ForecastRequest } from "./forecast.js";
import { fastest, headroomOf, protectFit, tpotFit, type Slo } from "./oracle-choice.js";

export type OracleRule = "tpot_fit" | "protect" | "trade" | "fastest";

const TTFT_HEADER = "x-slo-ttft-ms";
const TPOT_HEADER = "x-slo-tpot-ms";
const MAX_PROBES = 4;
/** When the probes arrive, after this request: a slot it holds for long keeps later probes waiting. */
const PROBE_OFFSETS_MS = [0, 200, 400, 600, 800];
/** protect: below 1 / probes, so the probes only rank the pods meeting the SLO; trade: 3 probes outweigh the request. */
const PROBE_WEIGHT: Record<Exclude<OracleRule, "tpot_fit" | "fastest">, number> = { protect: 0.01, trade: 0.35 };

/** As predicted_latency's sloOf: the header's number when finite and > 0, else 0 (none). */
function sloOf(headers: ReadonlyArray<readonly [string, string]>, name: string): number {
  const h = headers.find(([k]) => k.toLowerCase() === name);
  const v = h ? Number.parseFloat(h[1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : 0;
}

interface Probe extends ForecastRequest { slo: Slo }

export class SloOraclePicker implements Picker {
  readonly forecaster: FleetForecaster;
  /** Tight requests seen, by output length (the probes of `protect`). */
  private readonly probes = new Map<number, Probe>();

  /** `blind`: forecasts with the mean API overhead, not the pod's next draw (forecast.ts). */
  constructor(private readonly fleet: VirtualFleet, private readonly rule: OracleRule, blind = false) {
    this.forecaster = new FleetForecaster(fleet, blind);
  }

  pick(body: unknown, headers: ReadonlyArray<readonly [string, string]> = []): Pick {
    const request: ForecastRequest = { promptTokens: promptTokens(body), maxTokens: maxTokensOf(body) };
    const slo: Slo = { ttftMs: sloOf(headers, TTFT_HEADER), tpotMs: sloOf(headers, TPOT_HEADER) };
    const pods = this.fleet.pods.map((_, i) => i);
    const own = pods.map((i) => this.forecaster.forecast(i, [request])[0]);
    const choice = this.rule === "fastest" ? fastest(own)
      : this.rule !== "tpot_fit" && this.probes.size > 0
      ? protectFit(own, slo, request.maxTokens, this.probesServed(request), PROBE_WEIGHT[this.rule])
      : tpotFit(own, slo, request.maxTokens);
    this.remember(request, slo);
    const f = own[choice.index];
    return { pod: choice.index, debug: `slo_oracle:${choice.reason}:ttft=${f.ttftMs.toFixed(3)}:tpot=${(f.tpotMs ?? 0).toFixed(3)}` };
  }

  /** probesServed(p): with `request` on pod p, how many probes (each shape at each offset) some pod would still serve within their SLO. */
  private probesServed(request: ForecastRequest): (pod: number) => number {
    const probes = [...this.probes.values()].flatMap((p) => PROBE_OFFSETS_MS.map((afterMs) => ({ ...p, afterMs })));
    const n = this.fleet.pods.length;
    const meets = (f: Forecast, p: Probe) => headroomOf(f, p.slo) >= 0;
    // Without the request: each probe on each pod.
    const alone = probes.map((p) => Array.from({ length: n }, (_, q) => meets(this.forecaster.forecast(q, [p])[0], p)));
    return (pod) => probes.reduce((sum, p, k) => {
      const served = alone[k].some((ok, q) => ok && q !== pod) || meets(this.forecaster.forecast(pod, [request, p])[1], p);
      return sum + (served ? 1 : 0);
    }, 0);
  }

  private remember(request: ForecastRequest, slo: Slo): void {
    if (slo.ttftMs <= 0) return;
    const tightest = Math.min(...[...this.probes.values()].map((p) => p.slo.ttftMs));
    if (slo.ttftMs < tightest) this.probes.clear();
    if (slo.ttftMs > tightest) return;
    this.probes.delete(request.maxTokens);
    this.probes.set(request.maxTokens, { ...request, slo });
    if (this.probes.size > MAX_PROBES) this.probes.delete(this.probes.keys().next().value!);
  }
}
