// Shared by the gateway-side queueing tests: a local stack of 2 gateways (1 VM each) and 2 tiny
// pods with queueing on, completions sent to one gateway, and the pool's queue read from Redis.
import http from "node:http";
import { expect } from "vitest";
import { Redis } from "ioredis";
import { startLocalStack, redisLbConfig, SLOW_MACHINE_PICK_DEADLINE_MS, MODEL_CLUSTER, ROUTE_NAME, type LocalStack } from "../../host-test/local-stack.js";
import { runScript } from "../lua/pool.js";

const NS = `{llmlb:${ROUTE_NAME}:${MODEL_CLUSTER}}`;
export const QKEYS = [`${NS}:q`, `${NS}:qhb`, `${NS}:qt`, `${NS}:adm`];

export interface QueueStack { stack: LocalStack; redis: Redis }

/** Two pods even where the queue admits one request at a time: with a single pod, two missed
 *  health checks on a loaded machine leave no healthy host (503) while a request waits. */
export async function startQueueStack(queue: Record<string, unknown>): Promise<QueueStack> {
  const stack = await startLocalStack({
    pods: 2, gateways: 2, workers: 1,
    fleet: { profile: "tiny", timeScale: 1, profileOverrides: { stepBaseMs: 10 } },
    plugin: (port) => ({ lb_policy: "global_least_request", lb_config: { ...redisLbConfig(port), pickDeadlineMs: SLOW_MACHINE_PICK_DEADLINE_MS, debugHeader: "x-llmlb-debug", ...queue } }),
  });
  return { stack, redis: new Redis(stack.redis.url) };
}

export async function stopQueueStack(q: QueueStack | undefined): Promise<void> {
  q?.redis.disconnect();
  await q?.stack.close();
}

/** `why`: the status, the plugin's debug header and the start of the body (a failure says what it was). */
export interface Answer { status: number; retryAfter: string; startedAt: number; endedAt: number; why: string }

/** A completion of `tokens` tokens through gateway `gw`; startedAt = its response headers. */
export function send(q: QueueStack, gw: number, tokens: number, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${q.stack.gateways[gw].url}/v1/completions`, { method: "POST", agent: false, headers: { "content-type": "application/json", ...headers } }, (res) => {
      const startedAt = Date.now();
      let body = "";
      res.on("data", (c: Buffer) => { if (body.length < 300) body += c.toString(); });
      res.on("end", () => resolve({
        status: res.statusCode ?? 0, retryAfter: String(res.headers["retry-after"] ?? ""), startedAt, endedAt: Date.now(),
        why: `${res.statusCode} ${String(res.headers["x-llmlb-debug"] ?? "")} ${body.slice(0, 300)}`,
      }));
    });
    req.on("error", reject);
    req.end(JSON.stringify({ model: "sim-tiny", prompt: "hello there", max_tokens: tokens, ignore_eos: true }));
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** [waiting, admitted] of the pool's queue (queue.lua depth). */
export async function depth(q: QueueStack): Promise<[number, number]> {
  return (await runScript(q.redis, "queue", QKEYS, ["depth"])) as [number, number];
}

/** Waits until the queue shows [waiting, admitted]. */
export async function until(q: QueueStack, want: [number, number]): Promise<void> {
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline) {
    const d = await depth(q);
    if (d[0] === want[0] && d[1] === want[1]) return;
    await sleep(5);
  }
  expect(await depth(q)).toEqual(want);
}
