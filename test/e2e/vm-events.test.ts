// VM events through the gateway with the real plugin (audit rows 8 and 9): a forced trap in one
// worker's VM, recovered on that worker's next stream (the dead VM's leases heal by their TTL and
// the new VM's picks are correct), and configuration updates under load (no request lost, every
// old root context ends, none leaks).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import { Redis } from "ioredis";
import { startLocalStack, redisLbConfig, SLOW_MACHINE_PICK_DEADLINE_MS, type LocalStack } from "../../host-test/local-stack.js";

const CLUSTER = "outbound|8000||vllm.static";
const NS = `{llmlb:llm:${CLUSTER}}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer { status: number; pod: string; debug: string }

function post(url: string, maxTokens: number): { done: Promise<Answer>; abort(): void } {
  let req!: http.ClientRequest;
  const done = new Promise<Answer>((resolve) => {
    req = http.request(`${url}/v1/chat/completions`, { method: "POST", agent: false, headers: { "content-type": "application/json" } }, (res) => {
      res.resume();
      const answer = () => ({ status: res.statusCode ?? 0, pod: String(res.headers["x-sim-pod"] ?? ""), debug: String(res.headers["x-llmlb-debug"] ?? "") });
      res.on("end", () => resolve(answer()));
      res.on("error", () => resolve({ ...answer(), status: -1 }));
    });
    req.on("error", () => resolve({ status: -1, pod: "", debug: "" }));
    req.end(JSON.stringify({ model: "sim-tiny", messages: [{ role: "user", content: "hello" }], max_tokens: maxTokens, ignore_eos: true }));
  });
  return { done, abort: () => req.destroy() };
}

async function inFlight(redis: Redis): Promise<number> {
  const load = await redis.zrange(`${NS}:load`, 0, -1, "WITHSCORES");
  return load.filter((_, i) => i % 2 === 1).map(Number).reduce((a, b) => a + b, 0);
}

/** The fleet's count once it is `want`, or what it is after `ms`: on a loaded machine (the whole
 *  suite on 2 cores) a pick can take longer than a fixed sleep. */
async function inFlightReaching(redis: Redis, want: number, ms = 3000): Promise<number> {
  const end = Date.now() + ms;
  let n = await inFlight(redis);
  while (n !== want && Date.now() < end) {
    await sleep(20);
    n = await inFlight(redis);
  }
  return n;
}

describe("a forced trap, then recovery", () => {
  let stack: LocalStack;
  let redis: Redis;
  beforeAll(async () => {
    // pickDeadlineMs 2000: every pick here must go through Redis (counts are asserted), and a VM's
    // first pick (NOSCRIPT, EVAL, candidate list) can pass the default 50 ms on a loaded machine.
    stack = await startLocalStack({
      pods: 3, workers: 1, healthCheckMs: 200,
      fleet: { profile: "tiny", timeScale: 1, profileOverrides: { stepBaseMs: 10 } },
      plugin: (port) => ({ lb_policy: "global_least_request", lb_config: { ...redisLbConfig(port), leaseTTL: 3, debugHeader: "x-llmlb-debug", pickDeadlineMs: SLOW_MACHINE_PICK_DEADLINE_MS } }),
    });
    redis = new Redis(stack.redis.port, stack.redis.host);
  }, 30_000);
  afterAll(async () => { redis?.disconnect(); await stack?.close(); });

  it("the recovered VM picks correctly and the dead VM's leases heal by their TTL", async () => {
    const gw = stack.gateways[0];
    const long = [post(gw.url, 400), post(gw.url, 400)];
    expect(await inFlightReaching(redis, 2)).toBe(2);
    // A real trap inside the plugin: a callback for a context it never created.
    const dead = gw.vms[0];
    dead.invoke("proxy_on_request_headers", 0, [4242, 0, 1]);
    expect(dead.failed).toBe(true);
    for (const l of long) l.abort();
    await Promise.all(long.map((l) => l.done));
    // Nobody released those two leases: the counts stay until the TTL.
    expect(await inFlight(redis)).toBe(2);
    const a = await post(gw.url, 1).done;
    expect(a.status).toBe(200);
    expect(gw.plugin!.recoveries).toBe(1);
    await sleep(3200);
    const heldSentAt = Date.now();
    const held = post(gw.url, 400);
    // The new acquire settled the expired leases: only the open stream counts now.
    expect(await inFlightReaching(redis, 1)).toBe(1);
    const busy = (await redis.zrangebyscore(`${NS}:load`, 1, "+inf"))[0];
    // A shared pick through Redis by the new VM avoids the busy pod.
    const probe = await post(gw.url, 1).done;
    expect(probe.status).toBe(200);
    expect(probe.debug).toContain("reason=least_request");
    // (Seen once in a full run with leaseTTL 2: the probe saw the busy pod at 0. Held's lease lives
    // by its renewals on the VM's tick, so a machine that stalls the tick past the TTL expires it:
    // say whether held had ended by then and how long after its send the probe was answered.)
    const probeAfterMs = Date.now() - heldSentAt;
    const heldEnded = await Promise.race([held.done.then((a) => `held ended first: status ${a.status}, ${a.debug}`), sleep(0).then(() => "held still open")]);
    expect(probe.debug, `${heldEnded}; probe answered ${probeAfterMs} ms after held's send`).not.toContain(`host=${busy}`);
    held.abort();
    await held.done;
    expect(await inFlightReaching(redis, 0)).toBe(0);
  });
});

describe("configuration updates under load", () => {
  let stack: LocalStack;
  beforeAll(async () => {
    // pickDeadlineMs 2000: every pick here must go through Redis (counts are asserted), and a VM's
    // first pick (NOSCRIPT, EVAL, candidate list) can pass the default 50 ms on a loaded machine.
    stack = await startLocalStack({
      pods: 3, workers: 2, healthCheckMs: 200,
      fleet: { profile: "tiny", timeScale: 1, profileOverrides: { stepBaseMs: 5 } },
      plugin: (port) => ({ lb_policy: "global_least_request", lb_config: redisLbConfig(port) }),
    });
  }, 30_000);
  afterAll(async () => { await stack?.close(); });

  it("no request is lost, every replaced root context ends (host and plugin) and Redis is not re-initialised", async () => {
    const gw = stack.gateways[0];
    const port = stack.redis.port;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const batch = Array.from({ length: 6 }, () => post(gw.url, 20).done);
      await sleep(20); // the batch is in flight (held for Redis or streaming) during the update
      const cfg = { lb_policy: "global_least_request", lb_config: { ...redisLbConfig(port), maxRequestCount: 100 + i } };
      expect(gw.plugin!.updateConfiguration(JSON.stringify(cfg))).toEqual([true, true]);
      statuses.push(...(await Promise.all(batch)).map((r) => r.status));
    }
    expect(statuses).toEqual(new Array(30).fill(200));
    expect(gw.plugin!.liveRoots).toBe(2);
    // The plugin forgot every replaced root: its last word on each VM is "1 left".
    for (const vm of [0, 1]) {
      const ended = gw.plugin!.logs.records.filter((r) => r.vm === vm && r.message.includes("root context")).map((r) => r.message);
      expect(ended).toHaveLength(5);
      expect(ended.at(-1)).toMatch(/ended; 1 left in this VM$/);
    }
    // Same Redis settings: the new roots reuse the worker's client instead of closing it, and
    // the plugin asked for every call to be written at once (no 3 ms batching).
    expect(gw.backend.redis.reinitCloses).toBe(0);
    for (const worker of [0, 1]) {
      expect(gw.backend.redis.settings(worker, `outbound|${port}||redis.static`)).toMatchObject({ bufferFlushTimeoutMs: 0, maxBufferSizeBeforeFlush: 0 });
    }
    expect(gw.plugin!.logs.records.filter((r) => r.level === "critical")).toEqual([]);
  });
});
