// Many gateways at once: 20 connections interleave 50 acquires each over 10 hosts. Atomic scripts
// must keep loads perfectly balanced and the books exact (no herding, no lost or double counts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { startRedis, type RedisFixture } from "../helpers/redis.js";
import { Pool, hostList, seededRandom } from "./pool.js";
import { expectLoadMatchesLeases } from "./invariants.js";

const CLIENTS = 20;
const ACQUIRES_PER_CLIENT = 50;

let server: RedisFixture;
let clients: Redis[];

beforeAll(async () => {
  server = await startRedis();
  clients = Array.from({ length: CLIENTS }, () => new Redis(server.port, server.host));
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  if (server.owned) await server.stop();
});

describe("concurrent gateways", () => {
  it("balance unit-cost requests to within one unit and release each lease exactly once", async () => {
    const route = `concurrent-${process.pid}`;
    const hosts = hostList(10);
    const pools = clients.map((c) => new Pool(c, route));
    await Promise.all(
      pools.map(async (pool, g) => {
        const rand = seededRandom(g + 1);
        for (let i = 0; i < ACQUIRES_PER_CLIENT; i++) {
          const r = await pool.acquireWithSync({ leaseId: `g${g}-${i}`, hosts, rnd: rand() });
          expect(r.status).toBe("OK");
        }
      }),
    );
    const loads = [...(await pools[0].loads()).values()];
    expect(loads).toHaveLength(10);
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(1);
    expect(loads.reduce((a, b) => a + b, 0)).toBe(CLIENTS * ACQUIRES_PER_CLIENT);
    expect(await pools[0].leaseIds()).toHaveLength(CLIENTS * ACQUIRES_PER_CLIENT);
    await expectLoadMatchesLeases(pools[0]);

    // Every lease is released twice, by two different gateways at once: exactly one wins.
    const released = await Promise.all(
      pools.map(async (pool, g) => {
        let count = 0;
        for (const owner of [g, (g + 1) % CLIENTS]) {
          for (let i = 0; i < ACQUIRES_PER_CLIENT; i++) count += await pool.release(`g${owner}-${i}`);
        }
        return count;
      }),
    );
    expect(released.reduce((a, b) => a + b, 0)).toBe(CLIENTS * ACQUIRES_PER_CLIENT);
    expect([...(await pools[0].loads()).values()].every((l) => l === 0)).toBe(true);
    expect(await pools[0].leaseIds()).toEqual([]);
  });

  it("keep exact books with weighted costs: a host's load is the sum of its leases' costs", async () => {
    const route = `weighted-${process.pid}`;
    const hosts = hostList(10);
    const pools = clients.map((c) => new Pool(c, route));
    let total = 0;
    await Promise.all(
      pools.map(async (pool, g) => {
        const rand = seededRandom(1000 + g);
        for (let i = 0; i < 25; i++) {
          const cost = (rand() % 9) + 1;
          const r = await pool.acquireWithSync({ leaseId: `w${g}-${i}`, hosts, cost, rnd: rand() });
          expect(r.status).toBe("OK");
          total += cost;
        }
      }),
    );
    const loads = [...(await pools[0].loads()).values()];
    expect(loads.reduce((a, b) => a + b, 0)).toBe(total);
    // Greedy least-loaded placement keeps every host within one max cost of the others.
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(9);
    await expectLoadMatchesLeases(pools[0]);
  });
});
