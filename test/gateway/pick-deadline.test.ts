// The pick deadline through the local gateway (2 VMs) with a real Redis frozen by SIGSTOP under
// load: every request completes (the picks Redis does not answer go on by the local fallback),
// only the picks in flight at the freeze and breakerFailures per VM wait for the deadline (the
// breaker then skips Redis), and once Redis is back the shared counts return to exact.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, redisLbConfig, type LocalStack } from "../../host-test/local-stack.js";
import { ChaosLoad, SharedCounts, sleep, timeToExact } from "../../bench/chaos-load.js";

const LEASE_TTL_S = 2;
const BREAKER_FAILURES = 3;
const CONCURRENCY = 8;
let stack: LocalStack;
let counts: SharedCounts;

beforeAll(async () => {
  stack = await startLocalStack({
    pods: 4, gateways: 1, workers: 2, fleet: { profile: "tiny", timeScale: 1 },
    plugin: (port) => ({ lb_policy: "global_least_request", lb_config: { ...redisLbConfig(port), leaseTTL: LEASE_TTL_S, breakerFailures: BREAKER_FAILURES, failurePenalty: 0 } }),
  });
  counts = new SharedCounts(stack.redis.url);
}, 60_000);
afterAll(async () => { counts?.close(); await stack?.close(); });

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${stack.gateways[0].adminUrl}/stats/prometheus`)).text();
  const line = text.split("\n").find((l) => l.startsWith(name + " "));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}
const FALLBACKS = 'llmlb_picks_total{policy="global_least_request",reason="local_fallback"}';
const MISSES = 'llmlb_redis_failures_total{kind="pick_deadline"}';

describe("pick deadline through the gateway, Redis frozen (SIGSTOP)", () => {
  it("requests during the freeze complete by the fallback, few wait for the deadline, counts exact after the return", async () => {
    const gw = stack.gateways[0];
    const load = new ChaosLoad({ targets: [{ url: gw.url, alive: true }], concurrency: CONCURRENCY, abortRate: 0, resetRate: 0, tokens: [2, 6] });
    load.start();
    await sleep(800);
    const fallbacksBefore = await metric(FALLBACKS);
    stack.redis.pause();
    await sleep(1500);
    stack.redis.resume();
    const back = Date.now();
    const fallbacksFrozen = (await metric(FALLBACKS)) - fallbacksBefore;
    await sleep(500);
    await load.stop();
    expect(load.tally.failures).toEqual([]);
    expect(load.tally.pluginFailed).toBe(0);
    expect(fallbacksFrozen).toBeGreaterThan(20); // the freeze was served, locally
    // Only the picks in flight when Redis froze, and breakerFailures per VM, waited for the deadline.
    const misses = await metric(MISSES);
    console.log(`pick deadline, Redis frozen 1.5 s: ${load.tally.sent} requests, ${fallbacksFrozen} local fallbacks, ${misses} deadline misses`);
    expect(misses).toBeGreaterThan(0);
    expect(misses).toBeLessThanOrEqual(CONCURRENCY + 2 * BREAKER_FAILURES);
    // Back on Redis within 2 s; late replies released, given-up ids tombstoned: exact counts.
    const ms = await timeToExact(counts, () => gw.url, back, 2000 + LEASE_TTL_S * 1000 + 1000);
    expect(ms).not.toBeNull();
  }, 60_000);
});
