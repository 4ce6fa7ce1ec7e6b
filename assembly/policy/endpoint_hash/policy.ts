// endpoint_hash: sticky sessions on a header (Higress PR #3967, higress-parity.md section 7). The
// session's pod is kept in Redis under a key derived from the header value (sticky_key.ts); one
// atomic call (lua/prefix.lua with the session key as its only level) keeps the session on its pod
// while that pod is a healthy candidate and not over the load gate, else moves it to the least
// loaded pod, which keeps it from then on (the key is rewritten, its TTL stickyTimeout refreshed on
// every hit), and takes the request's lease like global_least_request. Decided at request headers
// (Higress waits for a body, so bodiless requests hang: Higress issue #3740).
// Inputs: the hash header's raw value bytes, candidates. Config: config/endpoint_hash_settings.ts,
// the load gate keys of prefix_cache, the Redis and accounting keys of global_least_request.
// Failure behaviour: no header -> plain global least request (no session to keep); Redis
// unavailable -> per-VM least request (Accounting's fallback), no stickiness meanwhile.
import { Policy } from "../policy";
import { LbConfig } from "../../config/lb_config";
import { Services } from "../../services/services";
import { Verdict } from "../../services/request/verdict";
import { LbRequest } from "../../services/request/request";
import { AcquireCall } from "../../services/lease/accounting";
import { PREFIX_SCRIPT } from "../../services/lease/scripts";
import * as host from "../../host/calls";
import { stickyKey } from "./sticky_key";
import { StickyReasonPort } from "./reason_port";

export class EndpointHashPolicy extends Policy {
  /** ARGV 8..11 of prefix.lua: key_ttl_s (stickyTimeout), gate_abs, gate_rel, gate_cap. */
  private readonly gateArgs: string[];

  constructor(cfg: LbConfig, services: Services) {
    super(cfg, services);
    const p = cfg.prefix;
    this.gateArgs = [cfg.endpointHash.stickyTtlSeconds.toString(), p.gateAbs.toString(), p.gateRel.toString(), p.gateCap.toString()];
  }

  needsBody(): bool { return false; }

  decide(r: LbRequest): Verdict {
    const c = r.candidates();
    if (c.size == 0) return Verdict.Pass;
    const accounting = this.services.accounting;
    const s = this.cfg.endpointHash;
    const value = host.getHeaderBytes(host.MapType.RequestHeaders, s.hashHeader);
    const pool = r.pool;
    if (value === null || value.byteLength == 0 || pool === null) return accounting.acquireLeast(r, c);
    const key = stickyKey(s.compat, r.route, r.cluster, pool.ns, Uint8Array.wrap(value));
    r.port = new StickyReasonPort(r.port);
    return accounting.acquire(r, c, new AcquireCall(PREFIX_SCRIPT, [key], this.gateArgs, "sticky_new"));
  }
}
