// header (test-only): routes to the endpoint named in a request header, if it is a candidate.
// Makes end-to-end tests of the host and the gateway deterministic. Never active unless configured.
// Inputs: the header, candidates. Config: lb_config.header (default x-llmlb-endpoint).
// Failure behaviour: header absent or empty, or not a healthy host of the cluster -> Pass.
import { Policy } from "./policy";
import { Verdict } from "../services/request/verdict";
import { LbRequest } from "../services/request/request";
import * as host from "../host/calls";

export class HeaderPolicy extends Policy {
  needsBody(): bool { return false; }

  decide(r: LbRequest): Verdict {
    const wanted = host.getHeader(host.MapType.RequestHeaders, this.cfg.endpointHeader);
    if (wanted === null || wanted.length == 0) return Verdict.Pass;
    const c = r.candidates();
    if (c.size > 0 && !c.has(wanted)) {
      host.log(host.LogLevel.Warn, "header policy: " + wanted + " is not a healthy host of the cluster");
      return Verdict.Pass;
    }
    r.pickedHost = wanted;
    r.reason = "header";
    return Verdict.Picked;
  }
}
