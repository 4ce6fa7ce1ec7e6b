// Several gateway replicas (4 in-process gateways x 2 VMs, plus one gateway process that gets
// killed) sharing one Redis in front of simulated pods: the shared in-flight view stays exact under
// concurrency and returns to 0 after every kind of stream ending; a killed gateway's counts expire.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { startLocalStack, spawnGatewayProcess, redisLbConfig, SLOW_MACHINE_PICK_DEADLINE_MS, MODEL_CLUSTER, ROUTE_NAME, type LocalStack } from "../../host-test/local-stack.js";

const LEASE_TTL_S = 2;
const plugin = (port: number) => ({
  lb_policy: "global_least_request",
  // The counts must be exact, so no pick may fall back: a VM's first pick (NOSCRIPT, then EVAL of
  // the script, then the candidate list) can pass the default 50 ms deadline on a loaded machine.
  lb_config: { ...redisLbConfig(port), leaseTTL: LEASE_TTL_S, failurePenalty: 0, maxRequestCount: 6, pickDeadlineMs: SLOW_MACHINE_PICK_DEADLINE_MS },
});
let stack: LocalStack;
let redis: Redis;
const LOAD_KEY = `{llmlb:${ROUTE_NAME}:${MODEL_CLUSTER}}:load`;

beforeAll(async () => {
  // Slow pods (long decode) keep requests in flight long enough to observe them.
  stack = await startLocalStack({ pods: 4, gateways: 4, workers: 2, fleet: { profile: "tiny", timeScale: 1, profileOverrides: { stepBaseMs: 20 } }, plugin });
  redis = new Redis(stack.redis.url);
  redis.on("error", () => {}); // the outage tests stop Redis on purpose
}, 60_000);
afterAll(async () => {
  redis?.disconnect();
  await stack?.close();
});

async function loads(): Promise<number[]> {
  const flat = await redis.zrange(LOAD_KEY, 0, -1, "WITHSCORES");
  const out: number[] = [];
  for (let i = 1; i < flat.length; i += 2) out.push(Number(flat[i]));
  return out;
}
const total = async () => (await loads()).reduce((a, b) => a + b, 0);
async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Flight { done: Promise<{ status: number; ended: string }>; abort(): void }

/** A streaming chat request; resolves with the status and how it ended (complete/aborted/error). */
function fly(url: string, maxTokens: number, headers: Record<string, string> = {}): Flight {
  let req!: http.ClientRequest;
  const done = new Promise<{ status: number; ended: string }>((resolve) => {
    const body = JSON.stringify({ model: "sim-tiny", messages: [{ role: "user", content: "keep going" }], max_tokens: maxTokens, ignore_eos: true, stream: true });
    req = http.request(`${url}/v1/chat/completions`, { method: "POST", agent: false, headers: { "content-type": "application/json", ...headers } }, (res) => {
      res.on("data", () => {});
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ended: "complete" }));
      res.on("error", () => resolve({ status: res.statusCode ?? 0, ended: "error" }));
      res.on("close", () => resolve({ status: res.statusCode ?? 0, ended: res.complete ? "complete" : "aborted" }));
    });
    req.on("error", () => resolve({ status: 0, ended: "error" }));
    req.end(body);
  });
  return { done, abort: () => req.destroy() };
}

describe("4 gateways x 2 VMs sharing one Redis", () => {
  it("concurrent long requests are spread exactly, and every kind of ending returns the counts to 0", async () => {
    const urls = stack.gateways.map((g) => g.url);
    const flights: Flight[] = [];
    for (let i = 0; i < 16; i++) flights.push(fly(urls[i % urls.length], 150));
    await eventually(async () => (await total()) === 16);
    // Ideal: 16 requests over 4 pods = 4 each; atomic picks never exceed the ideal by a unit.
    const spread = await loads();
    expect(spread.length).toBe(4);
    for (const l of spread) expect(Math.abs(l - 4)).toBeLessThanOrEqual(1);
    // The pods agree once the requests have arrived: each one holds what Redis says it has.
    const held = () => stack.fleet.pods.map((p) => { const s = p.engine.snapshot(); return s.running + s.waiting; });
    await eventually(async () => held().reduce((a, b) => a + b, 0) === 16);
    expect(held().sort()).toEqual(spread.slice().sort());

    // Shed (local reply): every pod is at 4, limit 6 -> a low-priority request (limit 3) is shed.
    const shed = await fly(urls[0], 1, { "x-llm-priority": "low" }).done;
    expect(shed.status).toBe(429);
    // Upstream 500, upstream reset mid-stream, client aborts, normal completions.
    const failed = await fly(urls[1], 5, { "x-sim-status": "500" }).done;
    expect(failed.status).toBe(500);
    const reset = await fly(urls[2], 50, { "x-sim-reset-after": "3" }).done;
    expect(reset.ended).not.toBe("complete");
    for (const f of flights.slice(0, 8)) f.abort();
    const results = await Promise.all(flights.slice(8).map((f) => f.done));
    expect(results.every((r) => r.status === 200 && r.ended === "complete")).toBe(true);
    await eventually(async () => (await total()) === 0);
    expect(await redis.zcard(`{llmlb:${ROUTE_NAME}:${MODEL_CLUSTER}}:leases`)).toBe(0);
  });

  it("a killed gateway's counts are gone after the lease TTL", async () => {
    const dir = mkdtempSync(join(tmpdir(), "llmlb-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const gw = await spawnGatewayProcess(stack, plugin(stack.redis.port), dir);
    const url = gw.url;
    const flights = [fly(url, 2000), fly(url, 2000), fly(url, 2000)];
    await eventually(async () => (await total()) === 3);
    await gw.kill(); // no release will ever come from it
    await Promise.all(flights.map((f) => f.done));
    expect(await total()).toBe(3);
    await new Promise((r) => setTimeout(r, LEASE_TTL_S * 1000 + 300));
    // Any acquire (or the surviving gateways' reconcile tick) settles the expired leases.
    const probe = await fly(stack.gateways[0].url, 1).done;
    expect(probe.status).toBe(200);
    await eventually(async () => (await total()) === 0);
  });

  it("stopping Redis under load fails no request; routing through Redis resumes when it returns", async () => {
    const urls = stack.gateways.map((g) => g.url);
    const batch = (n: number, tokens: number) => Promise.all(Array.from({ length: n }, (_, i) => fly(urls[i % urls.length], tokens).done));
    const during = batch(24, 60);
    await new Promise((r) => setTimeout(r, 30));
    await stack.redis.stop();
    const after = await batch(16, 5);
    const results = [...(await during), ...after];
    expect(results.filter((r) => r.status !== 200 || r.ended !== "complete")).toEqual([]);
    await stack.redis.start();
    await redis.ping();
    // Breakers close after their open window; then picks take leases in Redis again.
    await eventually(async () => {
      const long = fly(urls[0], 200);
      await new Promise((r) => setTimeout(r, 100));
      const seen = (await total()) > 0;
      long.abort();
      await long.done;
      return seen;
    }, 20_000);
  });
});

