// predicted_latency's late binding (`sloHoldMs` > 0): a request whose chosen pod has no free batch
// slot waits at the gateway instead of in that pod's FCFS queue, so that when a slot frees the
// request that needs it first gets it (earliest deadline first), and a request can still go to
// whichever pod frees first. This list keeps the held requests of one VM in deadline order
// (arrival + TTFT SLO; none: last), FIFO among equal deadlines. The policy re-evaluates them when
// one of its streams ends (a slot freed) and on every tick while any is held.
// Pure bookkeeping: no host calls.
import { LbRequest } from "../../services/request/request";
import { CandidateSet } from "../../services/candidates/candidates";
import { PickReads } from "./pick_reads";
import { RequestTerms } from "./evaluation";

/** One more held request waiting for `host` (the plan's counts). */
export function countHost(counts: Map<string, f64>, host: string): void {
  counts.set(host, (counts.has(host) ? counts.get(host) : 0.0) + 1.0);
}

export class HeldRequest {
  constructor(public r: LbRequest, public c: CandidateSet, public reads: PickReads, public sinceMs: f64,
    public terms: RequestTerms) {}

  /** At its last evaluation no pod could serve it in time (it yields to the ones still on time). */
  late: bool = false;
  /** The host it waits for (its last evaluation's choice). */
  host: string = "";

  /** When its TTFT SLO runs out (Infinity without one). */
  get deadlineMs(): f64 { return this.terms.sloTtft > 0 ? this.sinceMs + this.terms.sloTtft : Infinity; }
}

export class HoldList {
  entries: HeldRequest[] = [];
  /** Changes whenever an entry comes, goes, or waits for another host (sibling records are
   *  written again only then). */
  version: i32 = 0;

  get length(): i32 { return this.entries.length; }

  /** Inserts after every entry with a deadline no later than its own. */
  add(h: HeldRequest): void {
    this.version++;
    const d = h.deadlineMs;
    this.entries.push(h);
    let at = this.entries.length - 1;
    while (at > 0 && this.entries[at - 1].deadlineMs > d) { this.entries[at] = this.entries[at - 1]; at--; }
    this.entries[at] = h;
  }

  /** `h`, on the list, now waits for `host` (its last evaluation's choice). */
  waitFor(h: HeldRequest, host: string): void {
    if (h.host == host) return;
    h.host = host;
    this.version++;
  }

  removeAt(i: i32): HeldRequest {
    this.version++;
    const h = this.entries[i];
    this.entries.splice(i, 1);
    return h;
  }

  /** Held requests on time with a deadline no later than `deadlineMs`, counted by the host they wait for. */
  aheadOf(deadlineMs: f64): Map<string, f64> {
    const out = new Map<string, f64>();
    for (let i = 0; i < this.entries.length; i++) {
      const h = this.entries[i];
      if (h.deadlineMs > deadlineMs) break;
      if (h.late || h.host.length == 0) continue;
      countHost(out, h.host);
    }
    return out;
  }

  /** Index of r's entry, -1 when it is not held. */
  indexOf(r: LbRequest): i32 {
    for (let i = 0; i < this.entries.length; i++) if (this.entries[i].r === r) return i;
    return -1;
  }
}
