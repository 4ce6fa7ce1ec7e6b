// predicted_latency reads its candidates' in-flight counts with the prefix read, one round trip
// before each pick (pick_reads.ts): a gateway sees another gateway's streams at once, not only
// after its next tick read (inflightRefreshMs, set to a minute here). The debug header shows the
// count the pick used (q) and Redis's count when the lease was taken (load): they agree.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import { startLocalStack, redisLbConfig, SLOW_MACHINE_PICK_DEADLINE_MS, type LocalStack } from "../../host-test/local-stack.js";

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({
    pods: 1, gateways: 2, workers: 1, healthCheckMs: 200,
    fleet: { profile: "tiny", timeScale: 1, profileOverrides: { stepBaseMs: 12 } },
    plugin: (port) => ({ lb_policy: "predicted_latency", lb_config: { ...redisLbConfig(port), pickDeadlineMs: SLOW_MACHINE_PICK_DEADLINE_MS, debugHeader: "x-llmlb-debug", inflightRefreshMs: 60_000, sloExploration: 0 } }),
  });
}, 30_000);
afterAll(async () => { await stack?.close(); });

interface Open { debug: string; firstChunk: Promise<void>; done: Promise<void> }

/** A streaming chat through gateway `g`: resolves `firstChunk` at the first body bytes, `done` at the end. */
function stream(g: number, maxTokens: number): Open {
  let debug = "";
  let first: () => void = () => {};
  const firstChunk = new Promise<void>((r) => { first = r; });
  const open = { debug, firstChunk, done: Promise.resolve() } as Open;
  open.done = new Promise<void>((resolve, reject) => {
    const req = http.request(`${stack.gateways[g].url}/v1/chat/completions`, { method: "POST", agent: false, headers: { "content-type": "application/json" } }, (res) => {
      open.debug = String(res.headers["x-llmlb-debug"] ?? "");
      res.on("data", () => first());
      res.on("end", () => { first(); resolve(); });
    });
    req.on("error", reject);
    req.end(JSON.stringify({ model: "sim-tiny", messages: [{ role: "user", content: "count me" }], max_tokens: maxTokens, ignore_eos: true, stream: true }));
  });
  return open;
}

function countsOf(debug: string): { q: number; load: number } {
  const q = debug.match(/:q=([0-9.]+)/);
  const load = debug.match(/;load=([0-9]+)/);
  return { q: q ? Number(q[1]) : NaN, load: load ? Number(load[1]) : NaN };
}

describe("predicted_latency's counts at pick time", () => {
  it("sees the streams another gateway opened since its last tick read", async () => {
    // Each gateway's first request; its tick read (every 60 s) has run or will not run again.
    await stream(0, 2).done;
    await stream(1, 2).done;
    // Gateway 1 holds four long streams (about 2.4 s each) on the one pod.
    const held = [stream(1, 200), stream(1, 200), stream(1, 200), stream(1, 200)];
    await Promise.all(held.map((s) => s.firstChunk));
    // Gateway 0 has no stream of its own open: only a fresh read can count gateway 1's.
    const probes: Array<{ q: number; load: number }> = [];
    for (let i = 0; i < 3; i++) {
      const p = stream(0, 2);
      await p.done;
      probes.push(countsOf(p.debug));
    }
    for (const c of probes) {
      expect(c.load).toBe(4);
      expect(c.q).toBe(c.load);
    }
    await Promise.all(held.map((s) => s.done));
  }, 30_000);
});
