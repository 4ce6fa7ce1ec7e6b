// global_least_request: one atomic Redis call picks the least-loaded healthy host (random
// tie-break) and adds this request's cost under a lease (lua/acquire.lua); the lease is released
// when the stream ends, however it ends, and expires by itself if the release never happens.
// Failure behaviour: Redis unavailable -> per-VM least request (Accounting's fallback).
import { Policy } from "./policy";
import { Verdict } from "./verdict";
import { LbStream } from "../filter/stream";

export class LeastRequestPolicy extends Policy {
  decide(s: LbStream): Verdict {
    const c = s.root.candidatesFor(this.cfg);
    if (c.size == 0) return Verdict.Pass;
    return s.root.accounting.acquireLeast(s, c);
  }
}
