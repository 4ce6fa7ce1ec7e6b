// The shape every policy has: decide() when the request is ready (headers, and the body when the
// policy needs it); the stream releases what was acquired when it ends (Accounting.release).
import { LbConfig } from "../config/lb_config";
import { Verdict } from "./verdict";
import { LbStream } from "../filter/stream";

export abstract class Policy {
  constructor(public cfg: LbConfig) {}

  /** Whether the decision needs the request body (else it is made from headers alone). */
  needsBody(): bool { return true; }

  abstract decide(s: LbStream): Verdict;
}
