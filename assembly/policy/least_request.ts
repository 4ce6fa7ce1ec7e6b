// global_least_request: one atomic Redis call picks the least-loaded healthy host (random
// tie-break) and adds this request's cost under a lease (lua/acquire.lua); the lease is released
// when the stream ends, however it ends, and expires by itself if the release never happens.
// Inputs: candidates, cost, limit (priority). Config: the common lease keys (lb_config.ts).
// Failure behaviour: no candidates -> Pass; Redis unavailable -> per-VM least request
// (Accounting's fallback).
import { Policy } from "./policy";
import { Verdict } from "../services/request/verdict";
import { LbRequest } from "../services/request/request";

export class LeastRequestPolicy extends Policy {
  decide(r: LbRequest): Verdict {
    const c = r.candidates();
    if (c.size == 0) return Verdict.Pass;
    return this.services.accounting.acquireLeast(r, c);
  }
}
