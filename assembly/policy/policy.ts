// The shape every policy has. A policy implements decide() and overrides only the hooks it needs;
// the others are no-ops. The filter calls them in this order for each request of a rule using it:
//   needsBody()            at request headers: hold the headers and buffer the body first?
//   decide(r)              when the request is ready: Picked (r.pickedHost set), Pass, Rejected
//                          (shed), or Pending (a Redis reply resumes the stream through r.port)
//   onResponseHeaders(r,s) upstream response headers arrived with status s
//   onFirstResponseBody(r) the first response body chunk arrived (time to first token)
//   onResponseBody(r,b,e)  a response body chunk (only when wantsResponseBody(); e: last chunk)
//   onStreamDone(r)        the stream ended, however it ended (after the lease was released)
// A policy sees the request record (LbRequest) and the shared services, never the HTTP stream.
import { LbConfig } from "../config/lb_config";
import { Verdict } from "../services/request/verdict";
import { LbRequest } from "../services/request/request";
import { Services } from "../services/services";

export abstract class Policy {
  constructor(public cfg: LbConfig, public services: Services) {}

  /** Whether the decision needs the request body (else it is made from headers alone). */
  needsBody(): bool { return true; }

  abstract decide(r: LbRequest): Verdict;

  onResponseHeaders(_r: LbRequest, _status: i32): void {}

  onFirstResponseBody(_r: LbRequest): void {}

  /** Whether onResponseBody should see the response body chunks (a copy per chunk). */
  wantsResponseBody(): bool { return false; }

  onResponseBody(_r: LbRequest, _chunk: Uint8Array, _endOfStream: bool): void {}

  onStreamDone(_r: LbRequest): void {}

  /** Every tick while Services.heldStreams > 0 (requests a policy holds itself), and every full tick. */
  onTick(_now: f64): void {}

  /** proxy_on_queue_ready for a shared queue: true when `token` is this policy's. */
  onQueueReady(_token: u32, _now: f64): bool { return false; }

  /** A new configuration replaces this policy: let go of any request it holds. */
  retire(): void {}
}
