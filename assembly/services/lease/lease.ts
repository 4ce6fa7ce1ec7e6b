// One request's claim on a host: counted in Redis (pool != null) or in this VM only (fallback).
import { OpenLease, Pool } from "./pool";

/** An open lease is what a renewal sends (id, host, cost); Pool.active holds these very objects. */
export class Lease extends OpenLease {
  released: bool = false;
  constructor(id: string, public pool: Pool | null, host: string, cost: i64) { super(id, host, cost); }
  get local(): bool { return this.pool === null; }
}
