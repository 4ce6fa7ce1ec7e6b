// Slot hand-off through a local gateway (lua/queue.lua exit, assembly/services/queue/admission.ts):
// when a stream ends, its slot goes to the head of the queue in the same Redis call, and a head
// held by the same gateway goes on when that reply arrives, not at its next poll. With a poll
// period of 3 s, a waiting request starts within a few ms of the slot freeing; a head held by
// another gateway takes its grant at its own poll.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QKEYS, startQueueStack, stopQueueStack, send as sendTo, until as untilOf, type Answer, type QueueStack } from "./queue-stack.js";

// Not 5000: the simulated pods close idle keep-alive connections after 5 s (Node's default, as
// vLLM's uvicorn does), and a poll period of the same length lined the remote head's first
// upstream request up with the pod closing that gateway's idle connection: Envoy (and this host)
// answer 503 "connection termination" then (seen in full npm test runs).
const POLL_MS = 3000;
let q: QueueStack;

beforeAll(async () => {
  q = await startQueueStack({ queueCapacity: 1, queuePollMs: POLL_MS, queueEntryTtlMs: 3 * POLL_MS, queueMaxWaitMs: 20_000 });
}, 30_000);
afterAll(async () => { await stopQueueStack(q); });

const send = (gw: number, tokens: number): Promise<Answer> => sendTo(q, gw, tokens);
const until = (want: [number, number]) => untilOf(q, want);

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
    expect(l.status, l.why).toBe(200);
    expect(w.status, w.why).toBe(200);
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
    expect(await q.redis.zscore(QKEYS[3], await onlyAdmitted())).not.toBeNull();
    const newcomer = send(0, 2);
    await until([1, 1]);
    const [r, n] = await Promise.all([remote, newcomer]);
    expect(r.status, r.why).toBe(200);
    expect(n.status, n.why).toBe(200);
    expect(r.startedAt).toBeGreaterThanOrEqual(l.endedAt - 5);
    expect(n.startedAt).toBeGreaterThanOrEqual(r.endedAt - 5);
    await until([0, 0]);
  }, 30_000);
});

async function onlyAdmitted(): Promise<string> {
  const ids = await q.redis.zrange(QKEYS[3], 0, -1);
  expect(ids).toHaveLength(1);
  return ids[0];
}
