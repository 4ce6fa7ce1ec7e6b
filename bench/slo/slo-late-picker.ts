// The SLO oracle with late binding (virtual time only): the same exact forecasts as slo_oracle
// (forecast.ts), but a request is not committed to an engine's FCFS queue at arrival. Every
// request joins a central queue; a scan (at each arrival and each request end, the only instants a
// batch slot frees or a new request appears) walks the queue in deadline order (arrival + TTFT
// SLO: EDF, so tight requests go first; least laxity first, deadline - the TTFT on an idle fast
// pod, was +0.3 points at 85% load and -0.6 / -0.2 at 46%, noise: not kept) and sends a request
// only to a pod with a free slot (running + waiting < maxNumSeqs, so it starts at the engine's
// next step, no queue behind others): the pod tpot_fit chooses among ALL pods from the forecasts
// with the time already held subtracted from the TTFT SLO. When tpot_fit's pod is full, the request stays held (a loose
// request waits for a slow pod's slot rather than taking a fast one while a slow one can still
// serve it in time). A request no pod can serve within its SLO any more (tpot_fit: slo_unmet, or
// its TTFT deadline passed) is late: it yields to the on-time ones and takes a free slot only after
// them, on the slowest free pod (it has lost its SLO; the fast slots stay for those that have not),
// and only where a slot stays free after it, until it is LATE_PATIENCE_MS past its deadline.
// A held request is forecast behind the held requests before it (in that order) that wait for
// the same full pod: the plan, so two held requests do not both count on the next free slot.
// TTFT is still measured from the client's send (bench/slo/virtual-run.ts), so the hold counts.
// Debug: `slo_oracle_late:<reason>:held=<ms>:ttft=<ms>:tpot=<ms>`, the forecast at the send, its
// TTFT from the client's send (held + the forecast from the send).
// Failure behaviour: never throws; a prompt the pods refuse is late and sent to a free pod (400).
import { promptTokens, maxTokensOf } from "../omniscient-picker.js";
import type { Pick } from "../picker-proxy.js";
import type { HoldingPicker } from "../virtual/virtual-picker.js";
import type { VirtualFleet } from "../virtual/virtual-fleet.js";
import { FleetForecaster, type ForecastRequest } from "./forecast.js";
import { fastest, tpotFit, type Slo } from "./oracle-choice.js";

const TTFT_HEADER = "x-slo-ttft-ms";
const TPOT_HEADER = "x-slo-tpot-ms";
/** A late request leaves this many slots free on a pod (for on-time requests arriving next)... */
const LATE_RESERVE_SLOTS = 1;
/** ...until it is this late (past its TTFT deadline); chosen on seed 11 (0 / 500 / 2000 / 5000 ms; 2 slots the same). */
const LATE_PATIENCE_MS = 2000;

function sloOf(headers: ReadonlyArray<readonly [string, string]>, name: string): number {
  const h = headers.find(([k]) => k.toLowerCase() === name);
  const v = h ? Number.parseFloat(h[1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : 0;
}

interface Held {
  request: ForecastRequest;
  slo: Slo;
  arrivalMs: number;
  /** arrival + TTFT SLO; Infinity without one. */
  deadlineMs: number;
  seq: number;
  late: boolean;
  send: (pick: Pick) => void;
}

export class SloLatePicker implements HoldingPicker {
  readonly forecaster: FleetForecaster;
  private held: Held[] = [];
  private seq = 0;
  /** Requests held at least once (a report figure). */
  heldCount = 0;

  /** `fastest`: FIFO, each request held for the pod of the lowest exact TTFT (SLOs ignored; never late): the TTFT bound with late binding. */
  constructor(private readonly fleet: VirtualFleet, private readonly rule: "tpot_fit" | "fastest" = "tpot_fit") {
    this.forecaster = new FleetForecaster(fleet);
  }

  route(body: unknown, headers: ReadonlyArray<readonly [string, string]>, send: (pick: Pick) => void): void {
    const request: ForecastRequest = { promptTokens: promptTokens(body), maxTokens: maxTokensOf(body) };
    const slo: Slo = { ttftMs: sloOf(headers, TTFT_HEADER), tpotMs: sloOf(headers, TPOT_HEADER) };
    const now = this.fleet.now();
    const h: Held = { request, slo, arrivalMs: now, deadlineMs: this.rule === "fastest" ? now : slo.ttftMs > 0 ? now + slo.ttftMs : Infinity, seq: this.seq++, late: false, send };
    this.held.push(h);
    this.scan();
    if (this.held.includes(h)) this.heldCount++;
  }

  onEnd(): void {
    this.scan();
  }

  /** Requests held now. */
  holding(): number {
    return this.held.length;
  }

  private free(pod: number): boolean {
    const e = this.fleet.pods[pod].engine;
    return e.numRunning() + e.numWaiting() < this.fleet.profile.maxNumSeqs;
  }

  private anyFree(): boolean {
    return this.fleet.pods.some((_, i) => this.free(i));
  }

  /** Sends what can start now: the on-time requests in deadline order, then the late ones in arrival order. */
  private scan(): void {
    if (this.held.length === 0 || !this.anyFree()) return;
    const now = this.fleet.now();
    const pods = this.fleet.pods.map((_, i) => i);
    const onTime = this.held.filter((h) => !h.late).sort((a, b) => a.deadlineMs - b.deadlineMs || a.seq - b.seq);
    // The plan: the held requests each full pod will take next, in deadline order (each forecast behind them).
    const plan: ForecastRequest[][] = pods.map(() => []);
    for (const h of onTime) {
      if (!this.anyFree()) return;
      const heldMs = now - h.arrivalMs;
      if (this.rule === "tpot_fit" && h.deadlineMs <= now) { h.late = true; continue; }
      const slo: Slo = { ttftMs: h.slo.ttftMs > 0 ? h.slo.ttftMs - heldMs : 0, tpotMs: h.slo.tpotMs };
      const f = pods.map((i) => this.forecaster.forecast(i, [...plan[i], h.request]).at(-1)!);
      const choice = this.rule === "fastest" ? fastest(f) : tpotFit(f, slo, h.request.maxTokens);
      if (choice.reason === "slo_unmet") { h.late = true; continue; }
      if (plan[choice.index].length > 0 || !this.free(choice.index)) { plan[choice.index].push(h.request); continue; } // wait for a slot there
      this.dispatch(h, choice.index, choice.reason, f[choice.index]);
    }
    const late = this.held.filter((h) => h.late).sort((a, b) => a.seq - b.seq);
    for (const h of late) {
      const slack = (i: number) => this.fleet.profile.maxNumSeqs - this.fleet.pods[i].engine.numRunning() - this.fleet.pods[i].engine.numWaiting();
      const free = pods.filter((i) => this.free(i) && (slack(i) > LATE_RESERVE_SLOTS || now - h.deadlineMs > LATE_PATIENCE_MS));
      if (free.length === 0) return;
      const f = pods.map((i) => (free.includes(i) ? this.forecaster.forecast(i, [h.request])[0] : null));
      // The slowest free pod (highest forecast TPOT; TTFT for one-token answers): the fast slots stay for on-time requests.
      const cost = (i: number) => f[i]!.tpotMs ?? f[i]!.ttftMs;
      const pod = free.reduce((best, i) => (cost(i) > cost(best) ? i : best), free[0]);
      this.dispatch(h, pod, "late", f[pod]!);
    }
  }

  private dispatch(h: Held, pod: number, reason: string, f: { ttftMs: number; tpotMs: number | null }): void {
    this.held = this.held.filter((x) => x !== h);
    const heldMs = this.fleet.now() - h.arrivalMs;
    h.send({ pod, debug: `slo_oracle_late:${reason}:held=${heldMs.toFixed(3)}:ttft=${(heldMs + f.ttftMs).toFixed(3)}:tpot=${(f.tpotMs ?? 0).toFixed(3)}` });
  }
}
