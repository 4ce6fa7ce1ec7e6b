// endpoint_hash reuses lua/prefix.lua (one level: the session key), whose reasons are prefix_hit /
// prefix_miss / prefix_spill; logs and the debug header say sticky_hit / sticky_new / sticky_moved.
import { ForwardingPort } from "../forwarding_port";

export function stickyReason(prefixReason: string): string {
  if (prefixReason == "prefix_hit") return "sticky_hit";
  if (prefixReason == "prefix_miss") return "sticky_new";
  if (prefixReason == "prefix_spill") return "sticky_moved";
  return prefixReason;
}

export class StickyReasonPort extends ForwardingPort {
  resumeWith(h: string, reason: string, load: string): void { this.inner.resumeWith(h, stickyReason(reason), load); }
}
