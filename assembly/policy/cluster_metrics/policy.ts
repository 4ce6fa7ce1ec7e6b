// cluster_metrics (lb_type: cluster): picks the service (an Envoy cluster of service_list) for each
// request by mode, from this VM's view of every service (board.ts): LeastBusy (in-flight),
// LeastTotalLatency / LeastFirstTokenLatency (mean of the last queue_size samples), AdaptiveScore
// (EWMA latencies x in-flight x error rate, p2c, cooldown). The choice goes into cluster_header
// (cluster_header.ts). With global_inflight_enabled (AdaptiveScore), lua/score.lua weighs the
// sampled candidates' scores by their global in-flight counts, which are leases (released at stream
// end, renewed, expiring) in the pool {global_inflight_key_prefix:<route>:AdaptiveScore}.
// Inputs: request start, response status, first response body chunk (TTFT), stream end.
// Config: config/cluster_metrics_settings.ts; README "cluster_metrics" lists where it differs from Higress.
// Failure behaviour: Redis unavailable or a bad reply -> the local AdaptiveScore pick (leased
// locally); a header that cannot be written (never in on_request_headers) -> no header, which on a
// cluster_header route is Envoy's 503 cluster_not_found (router.cc Filter::decodeHeaders). Never traps.
import { Policy } from "../policy";
import { LbConfig } from "../../config/lb_config";
import { MODE_ADAPTIVE_SCORE, MODE_NAMES } from "../../config/cluster_metrics_settings";
import { Services } from "../../services/services";
import { Verdict } from "../../services/request/verdict";
import { LbRequest } from "../../services/request/request";
import { CandidateSet, makeCandidateSet } from "../../services/candidates/candidates";
import { AcquireCall } from "../../services/lease/accounting";
import { SCORE_SCRIPT } from "../../services/lease/scripts";
import * as host from "../../host/calls";
import { ServiceBoard } from "./board";
import { ClusterPort, Placement } from "./port";
import { writeClusterHeader } from "../cluster_header";
import { fnv1a64Hex } from "../../util/fnv";

/** One request's part in the statistics. */
class Flight {
  status: i32 = 0;
  firstTokenSeen: bool = false;
  constructor(public service: i32, public startMs: f64) {}
}

class BoardPlacement extends Placement {
  constructor(private p: ClusterMetricsPolicy) { super(); }
  place(r: LbRequest, service: string, startMs: f64, reason: string): void {
    this.p.place(r, this.p.tokenIndex(service), startMs, reason);
  }
}

/** 5xx (Envoy's own 503/504 included) and 429 say the service failed; other 4xx are the client's. */
export function failedStatus(status: i32): bool { return status >= 500 || status == 429; }

export class ClusterMetricsPolicy extends Policy {
  readonly board: ServiceBoard;
  private readonly serviceSet: CandidateSet;
  /** Services as pool members: Envoy cluster names hold '|', which lease hosts may not (lua/lib.lua). */
  private readonly tokens: string[];
  private flights: Map<usize, Flight> = new Map();
  private placement: BoardPlacement | null = null;

  constructor(cfg: LbConfig, services: Services) {
    super(cfg, services);
    this.board = new ServiceBoard(cfg.clusterMetrics);
    const names = cfg.clusterMetrics.services;
    const tokens = new Array<string>();
    for (let i = 0; i < names.length; i++) tokens.push("svc-" + fnv1a64Hex(names[i]));
    this.serviceSet = makeCandidateSet(tokens);
    this.tokens = tokens;
  }

  needsBody(): bool { return false; }

  decide(r: LbRequest): Verdict {
    const now = host.nowMillis();
    const s = this.cfg.clusterMetrics;
    if (s.mode == MODE_ADAPTIVE_SCORE && s.globalInflight && r.pool !== null && this.board.size > 1) return this.decideGlobal(r, now);
    this.place(r, this.board.select(now, this.services.rng), now, MODE_NAMES[s.mode]);
    return Verdict.Pass;
  }

  private decideGlobal(r: LbRequest, now: f64): Verdict {
    const candidates = this.board.adaptiveCandidates(now, this.services.rng);
    const local = this.board.lowest(candidates, this.services.rng);
    const args: string[] = [candidates.length.toString()];
    for (let k = 0; k < candidates.length; k++) {
      args.push(this.tokens[candidates[k].index]);
      args.push(candidates[k].score.toString());
    }
    const port = r.port;
    let placement = this.placement;
    if (placement === null) { placement = new BoardPlacement(this); this.placement = placement; }
    r.port = new ClusterPort(port, placement, r, now);
    // fixedHost: when Redis cannot answer, the local AdaptiveScore pick is leased locally (Higress too
    // falls back to its local AdaptiveScore).
    const v = this.services.accounting.acquire(r, this.serviceSet, new AcquireCall(SCORE_SCRIPT, [], args, "adaptive_score", this.tokens[local]));
    if (v == Verdict.Pending) return v;
    r.port = port;
    if (v == Verdict.Picked) this.place(r, this.tokenIndex(r.pickedHost), now, r.reason);
    return Verdict.Pass;
  }

  /** The service index of a pool member (-1 if unknown). */
  tokenIndex(token: string): i32 { return this.tokens.indexOf(token); }

  /** Writes the chosen service (also from ClusterPort, on the Redis reply) and counts the request. */
  place(r: LbRequest, i: i32, now: f64, reason: string): void {
    if (i < 0) return;
    if (!writeClusterHeader(r, this.board.s.clusterHeader, this.board.s.services[i], reason)) return;
    this.board.onPicked(i);
    this.flights.set(changetype<usize>(r), new Flight(i, now));
  }

  onResponseHeaders(r: LbRequest, status: i32): void {
    const k = changetype<usize>(r);
    if (this.flights.has(k)) this.flights.get(k).status = status;
  }

  onFirstResponseBody(r: LbRequest): void {
    const k = changetype<usize>(r);
    if (!this.flights.has(k)) return;
    const f = this.flights.get(k);
    if (f.firstTokenSeen) return;
    f.firstTokenSeen = true;
    this.board.onFirstToken(f.service, host.nowMillis() - f.startMs, failedStatus(f.status));
  }

  onStreamDone(r: LbRequest): void {
    const k = changetype<usize>(r);
    if (!this.flights.has(k)) return;
    const f = this.flights.get(k);
    this.flights.delete(k);
    const now = host.nowMillis();
    // No status at all: the client left before any answer, which says nothing about the service.
    const outcome = f.status == 0 ? 0 : failedStatus(f.status) ? -1 : 1;
    this.board.onEnded(f.service, now - f.startMs, outcome, now);
  }
}
