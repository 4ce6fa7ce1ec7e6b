// The StreamPort cluster_metrics puts in front of the stream's while lua/score.lua answers: the
// accounting reports "picked <service>" through resumeWith (the script's global pick, or the local
// fallback), which for a cluster policy means "write the cluster header and let the request go on"
// (no override host). Everything else is passed through (and restores the stream's own port).
import { StreamPort, LbRequest } from "../../services/request/request";
import { ForwardingPort } from "../forwarding_port";

/** What the port does with the picked service (the policy implements it: no import circle). */
export abstract class Placement {
  abstract place(r: LbRequest, service: string, startMs: f64, reason: string): void;
}

export class ClusterPort extends ForwardingPort {
  constructor(inner: StreamPort, private placement: Placement, private r: LbRequest, private startMs: f64) { super(inner); }
  resumeWith(h: string, reason: string, _load: string): void {
    this.r.port = this.inner;
    if (!this.inner.enterAsync()) return;
    this.placement.place(this.r, h, this.startMs, reason);
    this.inner.resumePass();
  }
  resumePass(): void { this.r.port = this.inner; this.inner.resumePass(); }
  resumeShed(load: string): void { this.r.port = this.inner; this.inner.resumeShed(load); }
}
