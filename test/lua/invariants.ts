// Pool invariants checked against raw Redis state after the scripts ran.
import { expect } from "vitest";
import type { Pool } from "./pool.js";

/** For every host in load: load = sum of the costs of its leases (all leases here are live). */
export async function expectLoadMatchesLeases(pool: Pool): Promise<void> {
  const records = await pool.redis.hgetall(pool.leaseKey);
  const expected = new Map<string, number>();
  for (const record of Object.values(records)) {
    const [host, cost] = record.split(" ");
    expected.set(host, (expected.get(host) ?? 0) + Number(cost));
  }
  const loads = await pool.loads();
  for (const [host, load] of loads) expect({ host, load }).toEqual({ host, load: expected.get(host) ?? 0 });
  // Every lease is indexed by expiry, and every indexed lease has a record.
  expect((await pool.leaseIds()).sort()).toEqual(Object.keys(records).sort());
}
