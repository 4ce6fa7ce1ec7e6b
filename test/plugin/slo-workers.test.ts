// predicted_latency across the worker VMs of one Envoy (sloShareWorkers, default on): each VM
// publishes its open streams, recent ends and held requests in the process's shared data, and
// wakes the siblings holding requests through a shared queue when a stream ends. So two workers
// predict and hold as one VM would: a slot wait counts a sibling's stream by its progress, a freed
// slot goes to the earliest deadline whichever worker holds it. Through the host facade (one
// Envoy, 2 workers, manual clock) with a real Redis; each case also runs with sloShareWorkers
// false, where the workers behave as two gateways (what the feature changes).
import { describe, expect, it } from "vitest";
import { CLUSTER, host, hosts, postChat, CHAT_BODY, useRedisHost } from "./harness.js";
import type { TestHost } from "../../host-test/facade/index.js";
import { finish, start, teach } from "./slo-streams.js";

const t = useRedisHost();

const NS = `{llmlb:llm:${CLUSTER}}`;
const LOOSE = { "x-slo-ttft-ms": "5000", "x-slo-tpot-ms": "1000" };
const TIGHT = { "x-slo-ttft-ms": "3000", "x-slo-tpot-ms": "1000" };

/** The records of the pool in the Envoy's shared data (slots 0, 1, ... up to the first missing). */
function records(h: TestHost): string[] {
  const out: string[] = [];
  for (let i = 0; ; i++) {
    const r = h.plugin.sharedData.get(h.plugin.options.vmId, `llmlb:sib2:${NS}:${i}`);
    if (!r.value) return out;
    out.push(r.value.toString());
  }
}

/** One Envoy with 2 workers on `pods` one-slot pods, the model taught (TTFT 20 ms, TPOT 10 ms). */
async function twoWorkers(pods: number, extra: Record<string, unknown>, workers = 2): Promise<TestHost> {
  const h = t.host = await host({
    configuration: {
      lb_policy: "predicted_latency",
      lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 500, modelBatchSlots: 1, sloExploration: 0, debugHeader: "x-llmlb-debug", ...extra },
    },
    redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(pods) }, workers,
  });
  await teach(h, LOOSE);
  return h;
}

/** The predicted slot wait of a request worker 1 sends to the one pod while worker 0's stream
 *  there has sent its first token 100 ms ago (16 tokens at 10 ms: ~50 ms left). */
async function waitBehindSibling(share: boolean): Promise<number> {
  const h = await twoWorkers(1, { sloShareWorkers: share });
  const theirs = postChat(h, CHAT_BODY, LOOSE, 0).s;
  await h.redisIdle();
  h.advance(5);
  start(theirs);
  h.advance(100);
  const mine = postChat(h, CHAT_BODY, LOOSE, 1).s;
  await h.redisIdle();
  expect(mine.forwarded).not.toBeNull(); // no late binding: it goes to the full pod at once
  start(mine);
  const m = String(mine.response.headers["x-llmlb-debug"]).match(/:wait=([0-9.]+)/);
  expect(m).not.toBeNull();
  return Number(m![1]);
}

/** Worker 0 fills the one pod, holds a loose request; worker 1 then holds a tight one (the earlier
 *  deadline); worker 0's stream ends. Which request each worker has sent right after. */
async function freedSlotGoesTo(share: boolean, updates = 0): Promise<{ loose: boolean; tight: boolean; h: TestHost }> {
  const h = await twoWorkers(1, { sloHoldMs: 2000, sloShareWorkers: share });
  for (let i = 0; i < updates; i++) h.updateConfiguration(h.plugin.options.configuration);
  if (updates > 0) await teach(h, LOOSE);
  const busy = postChat(h, CHAT_BODY, LOOSE, 0).s;
  await h.redisIdle();
  start(busy);
  const loose = postChat(h, CHAT_BODY, LOOSE, 0).s;
  await h.redisIdle();
  h.advance(5);
  const tight = postChat(h, CHAT_BODY, TIGHT, 1).s;
  await h.redisIdle();
  expect(loose.forwarded).toBeNull();
  expect(tight.forwarded).toBeNull();
  h.advance(1);
  finish(busy);
  await h.redisIdle();
  return { loose: loose.forwarded !== null, tight: tight.forwarded !== null, h };
}

describe("predicted_latency across the workers of one Envoy (sloShareWorkers)", () => {
  it("a slot wait counts a sibling worker's stream by its progress", async () => {
    const wait = await waitBehindSibling(true);
    expect(wait).toBeGreaterThan(40);
    expect(wait).toBeLessThan(60);
  });

  it("without sloShareWorkers the sibling's stream is an average stream of another gateway", async () => {
    // Half of an average service (TTFT 20 + decode 10 ms), whatever the stream's progress; not 0
    // (the sibling's stream ignored).
    const wait = await waitBehindSibling(false);
    expect(wait).toBeGreaterThan(10);
    expect(wait).toBeLessThan(20);
  });

  it("a freed slot goes to the earliest deadline held by either worker, woken at once", async () => {
    const { loose, tight, h } = await freedSlotGoesTo(true);
    expect(tight).toBe(true); // worker 1, woken by worker 0's end, saw the slot free (no tick, no read)
    expect(loose).toBe(false); // worker 0 left the slot to the sibling's earlier deadline
    expect(h.vms.every((vm) => !vm.failed)).toBe(true);
  });

  it("one wake queue per VM however often the configuration changes (Envoy never frees a queue), and a wake still reaches the sibling", async () => {
    const { loose, tight, h } = await freedSlotGoesTo(true, 5);
    expect(h.plugin.queues.names("").filter((n) => n.startsWith("llmlb:wake:"))).toHaveLength(2);
    expect(tight).toBe(true);
    expect(loose).toBe(false);
  });

  it("a lone worker writes only a heartbeat; with a sibling its record lists its open streams", async () => {
    for (const workers of [1, 2]) {
      const h = await twoWorkers(1, {}, workers);
      const s = postChat(h, CHAT_BODY, LOOSE, 0).s;
      await h.redisIdle();
      const recs = records(h);
      expect(recs.length).toBe(workers);
      const listed = recs.flatMap((r) => r.split("\n").slice(1)).filter((l) => l.startsWith("10.0.0.1:8000 "));
      expect(listed.length).toBe(workers === 1 ? 0 : 1);
      start(s);
      finish(s);
      await h.redisIdle();
      h.close();
      t.host = null;
    }
  });

  it("a lease refused for want of a slot is no stream end in the record (the siblings' counts never held it)", async () => {
    const h = await twoWorkers(1, { sloHoldMs: 2000 });
    const busy = postChat(h, CHAT_BODY, LOOSE, 0).s;
    await h.redisIdle();
    start(busy);
    const held = postChat(h, CHAT_BODY, LOOSE, 0).s;
    await h.redisIdle();
    expect(held.forwarded).toBeNull();
    // Another gateway takes the slot as it frees: worker 0's pass sends `held`, Redis refuses it.
    await t.client.zincrby(`${NS}:load`, 1, "10.0.0.1:8000");
    h.advance(5);
    const endedAt = h.now;
    finish(busy);
    await h.redisIdle();
    expect(held.forwarded).toBeNull();
    expect(h.metric("llmlb_slo_slot_refused_total")).toBe(1);
    // An end's line: "~<host> <picked> <ended>", each time as its age at the record's publish + 1.
    const ends = records(h).flatMap((r) => {
      const published = Number(r.split(" ")[1]);
      return r.split("\n").filter((l) => l.startsWith("~")).map((l) => [0, ...l.split(" ").slice(1).map((v) => published - (Number(v) - 1))]);
    });
    expect(ends.some(([, , end]) => end === endedAt)).toBe(true); // busy's end is there...
    expect(ends.filter(([, picked]) => picked >= endedAt)).toEqual([]); // ...the refused one is not
  });

  it("counts the workers that share in llmlb_slo_workers_sharing, and none once their configuration is replaced", async () => {
    for (const [workers, share, expected] of [[2, true, 2], [2, false, 0], [1, true, 0]] as const) {
      const h = await twoWorkers(2, { sloShareWorkers: share }, workers);
      // Each worker picks (and reads the records) after the other has written its own.
      for (const vm of [0, 1, 0]) {
        const s = postChat(h, CHAT_BODY, LOOSE, vm % workers).s;
        await h.redisIdle();
        start(s);
        finish(s);
        await h.redisIdle();
      }
      expect(h.metric("llmlb_slo_workers_sharing")).toBe(expected);
      if (expected > 0) {
        h.updateConfiguration(h.plugin.options.configuration);
        expect(h.metric("llmlb_slo_workers_sharing")).toBe(0);
      }
      h.close();
      t.host = null;
    }
  });

  it("without sloShareWorkers the worker whose stream ended takes the slot for its own request", async () => {
    const { loose, tight } = await freedSlotGoesTo(false);
    expect(loose).toBe(true);
    expect(tight).toBe(false);
  });
});
