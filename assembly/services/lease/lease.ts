// One request's claim on a host: counted in Redis (pool != null) or in this VM only (fallback).
import { Pool } from "./pool";

export class Lease {
  released: bool = false;
  constructor(public id: string, public pool: Pool | null, public host: string, public cost: i64) {}
  get local(): bool { return this.pool === null; }
}
