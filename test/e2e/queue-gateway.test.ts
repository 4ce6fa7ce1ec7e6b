// Gateway-side queueing through two local gateways sharing one Redis in front of simulated pods:
// with the pool's capacity taken, requests from both gateways wait (streams held) and are admitted
// in arrival order as slots free; a request waiting past queueMaxWaitMs gets 429 + Retry-After;
// entries of a gateway that stopped polling (crashed) expire and never take a slot.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runScript } from "../lua/pool.js";
import { QKEYS, startQueueStack, stopQueueStack, send as sendTo, sleep, depth as depthOf, until as untilOf, type Answer, type QueueStack } from "./queue-stack.js";

let q: QueueStack;
let stack: QueueStack["stack"];
let redis: QueueStack["redis"];

beforeAll(async () => {
  q = await startQueueStack({ queueCapacity: 2, queuePollMs: 20, queueMaxWaitMs: 2500, queueEntryTtlMs: 400 });
  ({ stack, redis } = q);
}, 30_000);
afterAll(async () => { await stopQueueStack(q); });

const send = (gw: number, tokens: number, headers: Record<string, string> = {}): Promise<Answer> => sendTo(q, gw, tokens, headers);
const depth = () => depthOf(q);
const until = (want: [number, number]) => untilOf(q, want);

/** A plugin metric of both gateways summed (their admin /stats/prometheus). */
/** A metric summed over the gateways, 0 where a gateway shows none yet (a histogram before its first flush). */
async function metricOr0(name: string): Promise<number> {
  let sum = 0;
  for (const gw of stack.gateways) {
    const text = await (await fetch(`${gw.adminUrl}/stats/prometheus`)).text();
    const m = new RegExp(`^${name}(?:\\{\\})? (\\d+)$`, "m").exec(text);
    sum += m ? Number(m[1]) : 0;
  }
  return sum;
}

async function metric(name: string): Promise<number> {
  let sum = 0;
  for (const gw of stack.gateways) {
    const text = await (await fetch(`${gw.adminUrl}/stats/prometheus`)).text();
    const m = new RegExp(`^${name}(?:\\{\\})? (\\d+)$`, "m").exec(text);
    expect(m, `${name} on ${gw.adminUrl}`).not.toBeNull();
    sum += Number(m![1]);
  }
  return sum;
}

describe("gateway-side queueing", () => {
  it("a saturated pool queues requests of both gateways and admits them in arrival order", async () => {
    // Warm both gateways (first requests load scripts), then take both slots.
    await Promise.all([send(0, 1), send(1, 1)]);
    const long1 = send(0, 150);
    await until([0, 1]);
    const long2 = send(1, 300);
    await until([0, 2]);
    const queued: Promise<Answer>[] = [];
    for (let i = 0; i < 4; i++) {
      queued.push(send(i % 2, 3));
      await until([i + 1, 2]);
    }
    const [l1, l2] = await Promise.all([long1, long2]);
    const answers = await Promise.all(queued);
    for (const a of answers) expect(a.status).toBe(200);
    // None started before a slot freed; each started after the one queued before it.
    expect(Math.min(...answers.map((a) => a.startedAt))).toBeGreaterThanOrEqual(l1.endedAt - 5);
    for (let i = 1; i < answers.length; i++) expect(answers[i].startedAt).toBeGreaterThanOrEqual(answers[i - 1].startedAt);
    expect(l2.status).toBe(200);
    // Every slot is freed when its stream ends.
    await until([0, 0]); // polled: a slow machine frees the slots a little later
    // Metrics: the four that waited entered, were admitted, and left the depth gauge at 0.
    expect(await metric("llmlb_queue_entered_total")).toBe(4);
    expect(await metric("llmlb_queue_admitted_total")).toBe(4);
    expect(await metric("llmlb_queue_depth")).toBe(0);
    expect(await metric("llmlb_queue_timeouts_total")).toBe(0);
  }, 20_000);

  it("a request waiting longer than queueMaxWaitMs gets a 429 with Retry-After and leaves the queue", async () => {
    // Counters and the wait histogram count from what earlier tests left (this test alone: 0).
    const before = {
      timeouts: await metric("llmlb_queue_timeouts_total"), entered: await metric("llmlb_queue_entered_total"),
      admitted: await metric("llmlb_queue_admitted_total"),
    };
    const longs = [send(0, 400)];
    await until([0, 1]);
    longs.push(send(1, 400));
    await until([0, 2]); // both slots taken before the late one arrives
    const t0 = Date.now();
    const late = await send(1, 3);
    expect(late.status).toBe(429);
    expect(late.retryAfter).toBe("1");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2400);
    // Its exit reaches Redis on the gateway's next loop turn, maybe after the 429 reached us (as
    // in Envoy, which writes both from its dispatcher): it leaves the queue at once, not in order.
    const left = Date.now() + 1000;
    while (Date.now() < left && (await depth())[0] !== 0) await sleep(5);
    expect((await depth())[0]).toBe(0);
    expect(await metric("llmlb_queue_timeouts_total")).toBe(before.timeouts + 1);
    expect(await metric("llmlb_queue_entered_total")).toBe(before.entered + 1);
    expect(await metric("llmlb_queue_admitted_total")).toBe(before.admitted); // the timed-out one was never admitted
    // Every wait is recorded, the timed-out one's too: as many as entered the queue (histograms
    // show after Envoy's stats flush, so the count is compared once it caught up).
    const deadline = Date.now() + 6000;
    while (Date.now() < deadline && (await metricOr0("llmlb_queue_wait_ms_count")) < before.entered + 1) await sleep(100);
    expect(await metric("llmlb_queue_wait_ms_count")).toBe(before.entered + 1);
    expect(await metric("llmlb_queue_wait_ms_sum")).toBeGreaterThan(2400); // the timed-out wait alone
    expect(await metric("llmlb_queue_depth")).toBe(0);
    await Promise.all(longs);
  }, 20_000);

  it("entries of a gateway that stopped polling (crashed) expire and never take a slot", async () => {
    const long = send(0, 150);
    await until([0, 1]);
    const long2 = send(1, 150);
    await until([0, 2]);
    // A gateway enqueues two requests, then dies: it never polls again.
    expect(await runScript(redis, "queue", QKEYS, ["enter", "dead-gw:1", 2, "t", 2, 800, 60000])).toEqual(["QUEUED", "0"]);
    expect(await runScript(redis, "queue", QKEYS, ["enter", "dead-gw:2", 2, "t", 2, 800, 60000])).toEqual(["QUEUED", "1"]);
    const live = send(0, 3);
    await until([3, 2]);
    const a = await live;
    expect(a.status).toBe(200);
    await Promise.all([long, long2]);
    await sleep(100);
    // The dead entries are gone (expired), no slot is held by them.
    expect(await depth()).toEqual([0, 0]);
    expect(await redis.zscore(QKEYS[3], "dead-gw:1")).toBeNull();
  }, 20_000);
});
