// Test-only policy (lb_policy: header): routes to the endpoint named in a request header
// (lb_config.header, default x-llmlb-endpoint), if it is a candidate; else Pass. Makes end-to-end
// tests of the host and the gateway deterministic. Never active unless configured.
import { Policy } from "./policy";
import { Verdict } from "./verdict";
import { LbStream } from "../filter/stream";
import * as host from "../host/calls";

export class HeaderPolicy extends Policy {
  needsBody(): bool { return false; }

  decide(s: LbStream): Verdict {
    const wanted = host.getHeader(host.MapType.RequestHeaders, this.cfg.endpointHeader);
    if (wanted === null || wanted.length == 0) return Verdict.Pass;
    const c = s.root.candidatesFor(this.cfg);
    if (c.size > 0 && !c.has(wanted)) {
      host.log(host.LogLevel.Warn, "header policy: " + wanted + " is not a healthy host of the cluster");
      return Verdict.Pass;
    }
    s.pickedHost = wanted;
    s.reason = "header";
    return Verdict.Picked;
  }
}
