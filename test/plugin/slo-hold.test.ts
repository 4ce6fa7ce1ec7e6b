// predicted_latency's late binding (sloHoldMs): a request whose chosen pod has no free batch slot
// waits at the gateway, not in that pod's queue; it goes when a slot frees (earliest deadline
// first), after sloHoldMs at the latest; a client that leaves while held costs nothing. Through
// the host facade with a real Redis and a manual clock (pods of one slot, the model taught by
// a few streamed responses first).
import { describe, expect, it } from "vitest";
import { CLUSTER, advanceWithIo, host, hosts, postChat, CHAT_BODY, useRedisHost } from "./harness.js";
import type { TestHost, TestStream } from "../../host-test/facade/index.js";
import { finish, start, teach } from "./slo-streams.js";

const t = useRedisHost();

const NS = `{llmlb:llm:${CLUSTER}}`;
const LOOSE = { "x-slo-ttft-ms": "5000", "x-slo-tpot-ms": "1000" };
const TIGHT = { "x-slo-ttft-ms": "3000", "x-slo-tpot-ms": "1000" };

/** The fleet's count on each pod (Redis's load, in its order). */
async function loads(): Promise<number[]> {
  return (await t.client.zrange(`${NS}:load`, 0, -1, "WITHSCORES")).filter((_, i) => i % 2 === 1).map(Number);
}

function sloConfig(extra: Record<string, unknown> = {}): object {
  return {
    lb_policy: "predicted_latency",
    lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 500, modelBatchSlots: 1, sloHoldMs: 2000, sloExploration: 0, debugHeader: "x-llmlb-debug", ...extra },
  };
}

/** Both pods busy with an open stream each: every slot taken (with exploration a second request
 *  may go to the busy pod: more are sent until both are busy). */
async function fill(hh: TestHost): Promise<Map<string, TestStream>> {
  const open = new Map<string, TestStream>();
  for (let i = 0; i < 10 && open.size < 2; i++) {
    const { s } = postChat(hh, CHAT_BODY, LOOSE);
    await hh.redisIdle();
    expect(s.forwarded).not.toBeNull();
    start(s);
    open.set(s.forwarded!.upstream.address!, s);
  }
  expect(open.size).toBe(2);
  return open;
}

/** A host on two one-slot pods, its model taught, both pods busy with an open stream each. */
async function fullHost(extra: Record<string, unknown> = {}): Promise<{ h: TestHost; open: Map<string, TestStream> }> {
  const h = t.host = await host({ configuration: sloConfig(extra), redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(2) } });
  await teach(h, LOOSE);
  return { h, open: await fill(h) };
}

/** Two VMs on one-slot pods, VM 0's tick read a minute apart: VM 0 learns the model, then VM 1
 *  fills every pod with a stream. sloShareWorkers false: VM 1 is another gateway (another Envoy),
 *  known to VM 0 by the fleet's counts only (slo-workers.test.ts: two workers of one Envoy). */
async function filledByOtherVm(pods = 2): Promise<{ h: TestHost; theirs: TestStream[] }> {
  const h = t.host = await host({ configuration: sloConfig({ inflightRefreshMs: 60_000, sloShareWorkers: false }), redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(pods) }, workers: 2 });
  await teach(h, LOOSE);
  const theirs: TestStream[] = [];
  for (let i = 0; i < pods; i++) {
    const { s } = postChat(h, CHAT_BODY, LOOSE, 1);
    await h.redisIdle();
    start(s);
    theirs.push(s);
  }
  expect(new Set(theirs.map((s) => s.forwarded!.upstream.address)).size).toBe(pods);
  return { h, theirs };
}

describe("late binding (sloHoldMs)", () => {
  it("holds a request while its pod is full and sends it to the first pod whose slot frees", async () => {
    const { h, open } = await fullHost();
    const { s } = postChat(h, CHAT_BODY, LOOSE);
    await h.redisIdle();
    expect(s.forwarded).toBeNull(); // held at the gateway: no lease taken yet
    expect(await t.client.zscore(`${NS}:load`, "10.0.0.1:8000")).toBe("1");
    expect(h.metric("llmlb_slo_held")).toBe(1);
    h.advance(30);
    const [firstHost, firstStream] = [...open][1];
    finish(firstStream);
    await h.redisIdle();
    expect(s.forwarded!.upstream.address).toBe(firstHost);
    start(s);
    expect(s.response.headers["x-llmlb-debug"]).toMatch(/held=3\d/);
    expect(h.metric("llmlb_slo_held")).toBe(0);
    h.flushStats(); // Envoy merges histograms on its stats flush
    expect(h.metric("llmlb_slo_hold_ms")).toEqual({ count: 1, sum: 30.5 }); // circllhist bin [30, 31) midpoint
  });

  it("gives a freed slot to the earliest deadline, not the first held", async () => {
    const { h, open: byHost } = await fullHost();
    const open = [...byHost.values()];
    const loose = postChat(h, CHAT_BODY, LOOSE).s;
    h.advance(5);
    const tight = postChat(h, CHAT_BODY, TIGHT).s;
    await h.redisIdle();
    expect(loose.forwarded).toBeNull();
    expect(tight.forwarded).toBeNull();
    finish(open[0]);
    await h.redisIdle();
    expect(tight.forwarded).not.toBeNull();
    expect(loose.forwarded).toBeNull();
    finish(open[1]);
    await h.redisIdle();
    expect(loose.forwarded).not.toBeNull();
  });

  it("sends a held request after sloHoldMs even if no slot freed", async () => {
    const { h } = await fullHost({ sloHoldMs: 300 });
    const { s } = postChat(h, CHAT_BODY, LOOSE);
    await h.redisIdle();
    h.advance(250);
    await h.redisIdle();
    expect(s.forwarded).toBeNull();
    h.advance(60); // a tick past 300 ms held
    await h.redisIdle();
    expect(s.forwarded).not.toBeNull();
  });

  it("a client that leaves while held takes no slot and no lease", async () => {
    const { h, open: byHost } = await fullHost();
    const open = [...byHost.values()];
    const { s } = postChat(h, CHAT_BODY, LOOSE);
    await h.redisIdle();
    s.abort();
    finish(open[0]);
    finish(open[1]);
    await h.redisIdle();
    expect(s.forwarded).toBeNull();
    expect(await loads()).toEqual([0, 0]);
    expect(h.vms.every((vm) => !vm.failed)).toBe(true);
  });

  it("learns of another gateway's freed slot from the fleet's counts, read every 20 ms while it holds", async () => {
    const { h, theirs } = await filledByOtherVm();
    const { s } = postChat(h, CHAT_BODY, LOOSE, 0);
    await h.redisIdle();
    expect(s.forwarded).toBeNull(); // the pick's own read of the counts saw both pods full
    finish(theirs[0]);
    await h.redisIdle();
    await advanceWithIo(h, 60, 10); // VM 0's tick reads the counts (its inflightRefreshMs is a minute)
    start(s);
    expect(s.response.headers["x-llmlb-debug"]).toMatch(/held=\d/);
    expect(s.forwarded!.upstream.address).toBe(theirs[0].forwarded!.upstream.address);
  });

  it("a slot another gateway took since this one's counts were read: Redis refuses the charge, the request stays held, then goes to a slot that really freed", async () => {
    const { h, theirs } = await filledByOtherVm();
    const [a, b] = theirs.map((s) => s.forwarded!.upstream.address!);
    const { s } = postChat(h, CHAT_BODY, LOOSE, 0);
    await h.redisIdle();
    expect(s.forwarded).toBeNull();
    finish(theirs[0]); // pod a frees...
    await h.redisIdle();
    await advanceWithIo(h, 10, 10); // ...VM 0's tick reads the counts (a free)...
    const { s: u } = postChat(h, CHAT_BODY, LOOSE, 1); // ...and VM 1 takes that slot first
    await h.redisIdle();
    expect(u.forwarded!.upstream.address).toBe(a);
    start(u);
    await advanceWithIo(h, 10, 10); // VM 0's pass sends s to a by its counts: refused
    expect(s.forwarded).toBeNull();
    expect(h.metric("llmlb_slo_slot_refused_total")).toBeGreaterThanOrEqual(1);
    expect(h.metric("llmlb_slo_held")).toBe(1);
    expect(await t.client.zscore(`${NS}:load`, a)).toBe("1"); // no second request queued on a
    finish(theirs[1]); // pod b frees
    await h.redisIdle();
    await advanceWithIo(h, 60, 10);
    expect(s.forwarded!.upstream.address).toBe(b);
    start(s);
    expect(s.response.headers["x-llmlb-debug"]).toMatch(/held=\d/);
    expect(h.metric("llmlb_slo_held")).toBe(0);
    expect(await t.client.zscore(`${NS}:load`, b)).toBe("1");
  });

  it("counts a minute old on a pool over 64 candidates (no read with the pick): refused a few times, never leased on a full pod, held until a slot frees", async () => {
    const { h, theirs } = await filledByOtherVm(65);
    const { s } = postChat(h, CHAT_BODY, LOOSE, 0); // VM 0 still counts the pods free
    await h.redisIdle();
    await advanceWithIo(h, 100, 10);
    expect(s.forwarded).toBeNull();
    const refused = h.metric("llmlb_slo_slot_refused_total") as number;
    expect(refused).toBeGreaterThanOrEqual(1);
    expect(refused).toBeLessThanOrEqual(3); // not a lease call per pod: held until the tracker reads again
    expect(Math.max(...await loads())).toBe(1);
    finish(theirs[5]);
    await h.redisIdle();
    await advanceWithIo(h, 60, 10);
    expect(s.forwarded!.upstream.address).toBe(theirs[5].forwarded!.upstream.address);
    expect(Math.max(...await loads())).toBe(1);
  });

  it("a late request (no pod can meet its SLO) leaves a pod's last free slot to on-time requests: it waits for a pod with two", async () => {
    const h = t.host = await host({ configuration: sloConfig({ modelBatchSlots: 2 }), redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(1) } });
    await teach(h, LOOSE); // TTFT 20 ms
    const { s: running } = postChat(h, CHAT_BODY, LOOSE);
    await h.redisIdle();
    start(running); // 1 of the pod's 2 slots taken
    const { s: late } = postChat(h, CHAT_BODY, { "x-slo-ttft-ms": "1", "x-slo-tpot-ms": "1000" });
    await h.redisIdle();
    await advanceWithIo(h, 30, 10);
    expect(late.forwarded).toBeNull(); // the free slot is the last one
    const { s: onTime } = postChat(h, CHAT_BODY, LOOSE);
    await h.redisIdle();
    expect(onTime.forwarded).not.toBeNull(); // an on-time request arriving next takes it at once
    start(onTime);
    finish(running);
    finish(onTime);
    await h.redisIdle();
    await advanceWithIo(h, 20, 10);
    expect(late.forwarded).not.toBeNull(); // both slots free: the late one goes
    start(late);
    expect(late.response.headers["x-llmlb-debug"]).toMatch(/slo_unmet_free_slot.*held=\d/);
  });

  it("explores once per request: a held request is not sent off by a later evaluation's draw", async () => {
    // With a draw per evaluation, each of the ~20 evaluations below would send a held request to a
    // random pod with probability 0.2 (0.8^20: ~1% of them would still be held).
    const { h } = await fullHost({ sloExploration: 0.2 });
    const streams: TestStream[] = [];
    for (let i = 0; i < 8; i++) streams.push(postChat(h, CHAT_BODY, LOOSE).s);
    await h.redisIdle();
    const held = streams.filter((s) => s.forwarded === null);
    expect(held.length).toBeGreaterThan(0); // the ones whose draw explored went at once
    await advanceWithIo(h, 200, 10);
    expect(held.filter((s) => s.forwarded !== null)).toHaveLength(0);
    expect(h.metric("llmlb_slo_held")).toBe(held.length);
  });

  it("waits for a pod that meets the SLO once a slot frees, rather than going late to a slow free pod", async () => {
    // Exploration 1: every request meeting its SLO somewhere goes to a random such pod (both get taught).
    const h = t.host = await host({ configuration: sloConfig({ sloExploration: 1 }), redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(2) } });
    const [fast, slow] = hosts(2).map((x) => x.address);
    // Taught: the fast pod answers in 20 ms, the slow one in 300 ms (TPOT 10 ms on both).
    const seen = new Map<string, number>();
    for (let i = 0; i < 100 && !((seen.get(fast) ?? 0) >= 12 && (seen.get(slow) ?? 0) >= 12); i++) {
      const { s } = postChat(h, CHAT_BODY, LOOSE);
      await h.redisIdle();
      const at = s.forwarded!.upstream.address!;
      seen.set(at, (seen.get(at) ?? 0) + 1);
      h.advance(at === slow ? 1000 : 20);
      start(s);
      h.advance(10);
      finish(s);
      await h.redisIdle();
    }
    expect(Math.min(seen.get(fast) ?? 0, seen.get(slow) ?? 0)).toBeGreaterThanOrEqual(12);
    // The fast pod's only slot taken by a stream with ~2 s of decode left (200 tokens); the slow pod free.
    const long = JSON.stringify({ ...JSON.parse(CHAT_BODY), max_tokens: 200 });
    let busy: TestStream | null = null;
    for (let i = 0; i < 20 && busy === null; i++) {
      const { s } = postChat(h, long, LOOSE);
      await h.redisIdle();
      start(s);
      if (s.forwarded!.upstream.address === fast) busy = s;
      else finish(s);
      await h.redisIdle();
    }
    expect(busy).not.toBeNull();
    // TTFT SLO 60 ms: no pod meets it counting the wait (fast: 20 ms + ~2 s, slow: 300 ms), but the
    // fast pod does the moment its slot frees: the request waits for it, not for nothing on the slow one.
    const { s } = postChat(h, CHAT_BODY, { "x-slo-ttft-ms": "250", "x-slo-tpot-ms": "1000" });
    await h.redisIdle();
    expect(s.forwarded).toBeNull();
    h.advance(10);
    finish(busy!);
    await h.redisIdle();
    expect(s.forwarded!.upstream.address).toBe(fast);
  });

  it("holds at most sloHoldMax requests per VM: the next one goes at once, as without late binding", async () => {
    const { h } = await fullHost({ sloHoldMax: 2 });
    const streams = [0, 1, 2].map(() => postChat(h, CHAT_BODY, LOOSE).s);
    await h.redisIdle();
    expect(streams.map((s) => s.forwarded === null)).toEqual([true, true, false]);
    expect(h.metric("llmlb_slo_held")).toBe(2);
  });

  it("without sloHoldMs the same request goes at once to a full pod", async () => {
    const { h } = await fullHost({ sloHoldMs: 0 });
    const { s } = postChat(h, CHAT_BODY, LOOSE);
    await h.redisIdle();
    expect(s.forwarded).not.toBeNull();
  });
});

describe("sloHoldMs configuration", () => {
  it("is refused without modelBatchSlots, naming both keys", async () => {
    const h = t.host = await host({ configuration: sloConfig({ modelBatchSlots: 0 }), redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(2) } });
    expect(h.logMessages().some((m) => m.includes("lb_config.sloHoldMs") && m.includes("modelBatchSlots"))).toBe(true);
  });
});
