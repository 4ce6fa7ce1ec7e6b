// The request as policies and services see it: a narrow record (route, cluster, cost, priority, a
// view of the body, candidates, the accounting pool) and the callbacks that report a decision back
// to the HTTP stream (StreamPort, implemented in filter/). Nothing here touches the stream itself,
// so policies and services can be read and tested without the stream context.
import { LbConfig } from "../../config/lb_config";
import { CandidateSet } from "../candidates/candidates";
import { CandidateSource } from "../candidates/source";
import { Lease } from "../lease/lease";
import { Pool } from "../lease/pool";
import { CountedPick } from "../metrics_view/counted_pick";
import { RequestBody } from "./body";
import { Verdict } from "./verdict";

export const PRIORITY_LOW: i32 = -1;
export const PRIORITY_NORMAL: i32 = 0;
export const PRIORITY_HIGH: i32 = 1;

/** How a decision reaches the stream; filter/stream.ts implements it. Async calls run on the root. */
export abstract class StreamPort {
  /** False once the stream ended (a late Redis reply must then release, not resume). */
  abstract alive(): bool;
  /** Before acting on the stream from a root callback: false when it is gone. */
  abstract enterAsync(): bool;
  /** Ends an async decision with the policy's verdict (Pending: another callback resumes). */
  abstract finishAsync(v: Verdict): void;
  /** Async pick: apply the override to `h` and let the request go on. */
  abstract resumeWith(h: string, reason: string, load: string): void;
  /** Async pass: the route's own load balancing picks. */
  abstract resumePass(): void;
  /** Async shed (429/503 with Retry-After). */
  abstract resumeShed(load: string): void;
  /** The admission queue let the request in (from a root callback): run the policy now. */
  abstract admitted(): void;
  /** Sync shed from decide() (the policy then returns Verdict.Rejected). */
  abstract shed(load: string): void;
}

export class LbRequest {
  cfg: LbConfig;
  route: string = "";
  cluster: string = "";
  /** Accounting pool of this route + cluster in Redis; null without Redis. */
  pool: Pool | null = null;
  /** The buffered body (null when the policy decides from headers). */
  body: RequestBody | null = null;
  cost: i64 = 1;
  /** Load limit for this request (0: none); from maxRequestCount and priority. */
  limit: i64 = 0;
  priority: i32 = PRIORITY_NORMAL;
  /** What the decision produced: lease, chosen host, reason and load for logs / debug header. */
  leaseId: string = "";
  /** Acquires sent again because Redis answered SETTLING (a backlog of expired buckets). */
  settleRounds: i32 = 0;
  lease: Lease | null = null;
  /** An acquire of leaseId is out (sent, no reply yet): Accounting.cancelAcquire at the end. */
  acquiring: bool = false;
  /** The stream ended with its acquire out and released the id already (its reply does nothing). */
  acquireCancelled: bool = false;
  /** The pick the in-flight tracker counts for this request (endpoint_metrics, predicted_latency). */
  counted: CountedPick | null = null;
  pickedHost: string = "";
  reason: string = "";
  load: string = "";
  /** When the pick was applied to the stream (ms; 0: not yet), for latency observations. */
  pickedAtMs: f64 = 0;
  /** When it started to wait in the gateway-side queue (ms; 0: it was admitted at once): the
   *  client's time to first token runs from then (predicted_latency counts the wait as held). */
  queuedAtMs: f64 = 0;
  /** The upstream host Envoy connected to (`upstream.address`), once known after an override
   *  host was set; "" before or when there was none (a local reply). */
  servedHost: string = "";
  /** Read servedHost once the response started or the stream ended (see servedElsewhere). */
  servedKnown: bool = false;
  /** Set when the stream ended: it failed (5xx) on servedHost. A lease moved there whose charge
   *  is answered after the end is released with this (Accounting.onMoved). */
  failedOnServed: bool = false;
  private cands: CandidateSet | null = null;

  constructor(cfg: LbConfig, public port: StreamPort, private source: CandidateSource) {
    this.cfg = cfg;
  }

  /** Envoy sent the request to another host than the pick (a retry: Envoy's router ignores the
   *  override host on retries; or an override host it did not honour): what was observed is not
   *  the picked host's, and the lease belongs where the stream runs. */
  servedElsewhere(): bool {
    return this.servedHost.length > 0 && this.pickedHost.length > 0 && this.servedHost != this.pickedHost;
  }

  /** The request's candidates (read once, on first use: header-only policies may never need them). */
  candidates(): CandidateSet {
    let c = this.cands;
    if (c === null) { c = this.source.candidatesFor(this.cfg, this.cluster); this.cands = c; }
    return c;
  }
}
