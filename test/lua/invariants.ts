// Pool invariants checked against raw Redis state after the scripts ran.
import { expect } from "vitest";
import type { Pool } from "./pool.js";

/**
 * For every host in load: load = sum of the costs of its live leases, and every bucket aggregate
 * "@<bucket> <host>" = sum of the costs of the leases it holds. Assumes no bucket is due but
 * unsettled (call after an acquire or the healer); records of dead leases (bucket <= now) may
 * remain until the healer collects them and count for nothing.
 */
export async function expectLoadMatchesLeases(pool: Pool): Promise<void> {
  const [sec, usec] = await pool.redis.time();
  const now = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
  const fields = await pool.redis.hgetall(pool.leaseKey);
  const dead = new Set<string>();
  const expected = new Map<string, number>();
  const buckets = new Map<string, number>();
  const ids: string[] = [];
  for (const [field, record] of Object.entries(fields)) {
    if (field.startsWith("@") || field.startsWith("#") || record.startsWith("~")) continue;
    ids.push(field);
    const [host, cost, bucket] = record.split(" ");
    if (Number(bucket) <= now) { dead.add(field); continue; }
    expected.set(host, (expected.get(host) ?? 0) + Number(cost));
    const member = `@${bucket} ${host}`;
    buckets.set(member, (buckets.get(member) ?? 0) + Number(cost));
  }
  const loads = await pool.loads();
  for (const [host, load] of loads) expect({ host, load }).toEqual({ host, load: expected.get(host) ?? 0 });
  const aggregates = Object.entries(fields).filter(([f]) => f.startsWith("@") && !f.endsWith(" h"));
  expect(Object.fromEntries(aggregates.map(([f, v]) => [f, Number(v)]))).toEqual(Object.fromEntries(buckets));
  // Every aggregate is indexed in the leases ZSET, and nothing else is (lease records carry their
  // bucket, unindexed).
  const members = await pool.redis.zrange(pool.leasesKey, 0, -1);
  expect(members.sort()).toEqual(Object.keys(fields).filter((f) => f.startsWith("@")).sort());
  expect((await pool.leaseIds()).sort()).toEqual(ids.sort());
}
