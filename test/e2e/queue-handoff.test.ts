// Slot hand-off through a local gateway (lua/queue.lua exit, assembly/services/queue/admission.ts):
// when a stream ends, its slot goes to the head of the queue in the same Redis call, and a head
// held by the same gateway goes on when that reply arrives, not at its next poll. With a poll
// period of 5 s, a waiting request starts within a few ms of the slot freeing; a head held by
// another gateway takes its grant at its own poll.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import { Redis } from "ioredis";
import { startLocalStack, redisLbConfig, MODEL_CLUSTER, ROUTE_NAME, type LocalStack } from "../../host-test/local-stack.js";
import { runScript } from "../lua/pool.js";

const NS = `{llmlb:${ROUTE_NAME}:${MODEL_CLUSTER}}`;
const QKEYS = [`${NS}:q`, `${NS}:qhb`, `${NS}:qt`, `${NS}:adm`];
const POLL_MS = 5000;
let stack: LocalStack;
let redis: Redis;

beforeAll(async () => {
  stack = await startLocalStack({
    // Two pods although the queue admits one request at a time: with a single pod, two missed
    // health checks on a loaded machine leave no healthy host (503) while a request waits.
    pods: 2, gateways: 2, workers: 1,
    fleet: { profile: "tiny", timeScale: 1, profileOverrides: { stepBaseMs: 10 } },
    plugin: (port) => ({ lb_policy: "global_least_request", lb_config: { ...redisLbConfig(port), queueCapacity: 1, queuePollMs: POLL_MS, queueEntryTtlMs: 3 * POLL_MS, queueMaxWaitMs: 20_000 } }),
  });
  redis = new Redis(stack.redis.url);
}, 30_000);
afterAll(async () => { redis?.disconnect(); await stack?.close(); });

interface Answer { status: number; startedAt: number; endedAt: number }

function send(gw: number, tokens: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${stack.gateways[gw].url}/v1/completions`, { method: "POST", agent: false, headers: { "content-type": "application/json" } }, (res) => {
      const startedAt = Date.now();
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, startedAt, endedAt: Date.now() }));
    });
    req.on("error", reject);
    req.end(JSON.stringify({ model: "sim-tiny", prompt: "hello there", max_tokens: tokens, ignore_eos: true }));
  });
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(want: [number, number]): Promise<void> {
  const deadline = Date.now() + 3000;
  let d: [number, number] = [-1, -1];
  while (Date.now() < deadline) {
    d = (await runScript(redis, "queue", QKEYS, ["depth"])) as [number, number];
    if (d[0] === want[0] && d[1] === want[1]) return;
    await sleep(5);
  }
  expect(d).toEqual(want);
}

describe("slot hand-off", () => {
  it("a freed slot admits the same gateway's head at once, not at its next poll", async () => {
    await Promise.all([send(0, 1), send(1, 1)]); // load the scripts on both gateways
    await until([0, 0]);
    const long = send(0, 60);
    await until([0, 1]);
    // Queued after its first poll: its next poll is POLL_MS away, far after long ends.
    const waiting = send(0, 2);
    await until([1, 1]);
    const [l, w] = await Promise.all([long, waiting]);
    expect(l.status).toBe(200);
    expect(w.status).toBe(200);
    expect(w.startedAt).toBeGreaterThanOrEqual(l.endedAt - 5);
    expect(w.startedAt - l.endedAt).toBeLessThan(POLL_MS / 5);
  }, 20_000);

  it("another gateway's head is handed the slot, takes it at its poll, and nobody overtakes it", async () => {
    await until([0, 0]);
    const long = send(0, 60);
    await until([0, 1]);
    const remote = send(1, 2);
    await until([1, 1]);
    const l = await long;
    // The slot is the remote head's (granted, not yet claimed): a newcomer on gateway 0 queues.
    await until([0, 1]);
    expect(await redis.zscore(QKEYS[3], await onlyAdmitted())).not.toBeNull();
    const newcomer = send(0, 2);
    await until([1, 1]);
    const [r, n] = await Promise.all([remote, newcomer]);
    expect(r.status).toBe(200);
    expect(n.status).toBe(200);
    expect(r.startedAt).toBeGreaterThanOrEqual(l.endedAt - 5);
    expect(n.startedAt).toBeGreaterThanOrEqual(r.endedAt - 5);
    await until([0, 0]);
  }, 30_000);
});

async function onlyAdmitted(): Promise<string> {
  const ids = await redis.zrange(QKEYS[3], 0, -1);
  expect(ids).toHaveLength(1);
  return ids[0];
}
