// A request's pick as the in-flight tracker counts it (InflightTracker.notePick), kept on the
// request (LbRequest.counted) so that its count is taken back exactly once (InflightTracker.takeBack),
// whatever lease the request got: a lease in Redis, a local lease, or none.
import { Pool } from "../lease/pool";

export class CountedPick {
  /** False once taken back. */
  open: bool = true;
  /** `readsSent`: the pool's reads sent before the pick (PoolInflight.readsSent). */
  constructor(public pool: Pool, public host: string, public cost: f64, public readsSent: i64) {}
}
