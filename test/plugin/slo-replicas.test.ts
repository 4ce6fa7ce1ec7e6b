// predicted_latency across gateways (sloShareReplicasMs): each VM exchanges its record of a pool
// (open streams, recent ends, held requests) with every other gateway's VMs through Redis
// (lua/records.lua), so a pick on one gateway counts the streams another opened by their progress,
// as it counts a sibling worker's, not as average streams behind a count. Through two host
// facades (two Envoys, clocks an hour apart: the records' times go by Redis's clock) and a real
// Redis; each case also runs with the exchange off, where the other gateway is its counts alone.
import { afterEach, describe, expect, it } from "vitest";
import { CLUSTER, host, hosts, postChat, CHAT_BODY, useRedisHost } from "./harness.js";
import type { TestHost, TestStream } from "../../host-test/facade/index.js";
import { start, teach } from "./slo-streams.js";

const t = useRedisHost();

const NS = `{llmlb:llm:${CLUSTER}}`;
const LOOSE = { "x-slo-ttft-ms": "5000", "x-slo-tpot-ms": "1000" };
/** A request of 200 tokens (2 s at the taught 10 ms per token). */
const LONG_BODY = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello" }], max_tokens: 200 });

const opened: TestHost[] = [];

/** A gateway (one Envoy, one worker) on one one-slot pod, its clock `offsetMs` from the first's.
 *  Redis timeout and pick deadline 5 s: under CPU stress a pick fell back (no lease) 3 times in 8
 *  with 500 ms / 50 ms, which says nothing of the exchange. */
async function gateway(extra: Record<string, unknown>, offsetMs: number, workers = 1): Promise<TestHost> {
  const h = await host({
    configuration: {
      lb_policy: "predicted_latency",
      lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 5000, pickDeadlineMs: 5000, modelBatchSlots: 1, sloExploration: 0, debugHeader: "x-llmlb-debug", ...extra },
    },
    redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(1) }, startTimeMs: 1_700_000_000_000 + offsetMs, workers,
  });
  opened.push(h);
  await teach(h, LOOSE);
  return h;
}

/** Gateways A and B (clocks an hour apart, `workers` each); A's long stream (worker 0) has been
 *  decoding for 1 s and A's ticks have exchanged its record. */
async function twoGateways(replicasMs: number, workers: number): Promise<{ a: TestHost; b: TestHost; theirs: TestStream }> {
  const extra = { sloShareReplicasMs: replicasMs };
  const a = await gateway(extra, 0, workers);
  const b = await gateway(extra, 3_600_000, workers);
  const theirs = postChat(a, LONG_BODY, LOOSE, 0).s;
  await a.redisIdle();
  a.advance(20);
  start(theirs);
  await a.redisIdle();
  // A's ticks (every 500 ms): the first exchange shows it B (A exchanged alone until then, every
  // 500 ms), the next sends its record listing its stream.
  for (let i = 0; i < 2; i++) {
    a.advance(500);
    await a.redisIdle();
  }
  return { a, b, theirs };
}

/** Gateway A's long stream has been decoding for a while (A's tick sent its record); gateway B then
 *  sends a request to the one pod: its predicted slot wait. (The facade's clocks are manual, Redis's
 *  is not: B takes A's record for as old as it is in real time, a few ms, so it sees the stream's
 *  progress as of A's last exchange.) */
async function waitBehindOtherGateway(replicasMs: number): Promise<{ wait: number; debug: string }> {
  const { b, theirs } = await twoGateways(replicasMs, 1);
  b.advance(1000);
  const mine = postChat(b, CHAT_BODY, LOOSE).s;
  await b.redisIdle();
  expect(mine.forwarded).not.toBeNull(); // no late binding: it goes to the full pod at once
  start(mine);
  const debug = String(mine.response.headers["x-llmlb-debug"] ?? "");
  const w = debug.match(/:wait=([0-9.]+)/);
  expect(w, debug).not.toBeNull();
  return { wait: Number(w![1]), debug: debug + " | A: " + String(theirs.response.headers["x-llmlb-debug"] ?? "") };
}

describe("predicted_latency across gateways (sloShareReplicasMs)", () => {
  afterEach(() => { while (opened.length > 0) opened.pop()!.close(); t.host = null; });

  it("a slot wait counts another gateway's stream by its progress (~1 s of its 2 s left)", async () => {
    const { wait, debug } = await waitBehindOtherGateway(20);
    expect(wait, debug).toBeGreaterThan(800);
    expect(wait, debug).toBeLessThan(1600);
  });

  it("off (the default): the other gateway's stream is an average stream behind the pod's count", async () => {
    const { wait } = await waitBehindOtherGateway(0);
    // Half an average service (TTFT 20 + decode 10 ms), whatever the stream's progress; not 0 (the
    // stream would be ignored) and not its ~1 s left (counted by its progress).
    expect(wait).toBeGreaterThan(10);
    expect(wait).toBeLessThan(20);
    expect(await t.client.exists(`${NS}:rec`)).toBe(0);
  });

  it("each VM's record is in Redis under the pool's hash, with Redis's time", async () => {
    await waitBehindOtherGateway(20);
    const rec = await t.client.hgetall(`${NS}:rec`);
    const values = Object.values(rec);
    expect(values).toHaveLength(2);
    for (const v of values) expect(Math.abs(Number(v.split(" ")[0]) - Date.now())).toBeLessThan(10_000);
    // A's lists its open stream on the pod: "<host> <picked> ..." after the head line.
    expect(values.some((v) => v.split("\n").slice(1).some((l) => l.startsWith("10.0.0.1:8000 ")))).toBe(true);
  });

  it("workers of one Envoy with the exchange on count a sibling's stream once (shared data, not Redis too)", async () => {
    const h = await host({
      configuration: { lb_policy: "predicted_latency", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 5000, pickDeadlineMs: 5000, modelBatchSlots: 1, sloExploration: 0, debugHeader: "x-llmlb-debug", sloShareReplicasMs: 5 } },
      redis: { url: t.redis.url }, clusters: { [CLUSTER]: hosts(1) }, workers: 2,
    });
    opened.push(h);
    await teach(h, LOOSE);
    // Worker 0's stream is picked and not started: a pending stream counts whatever the fleet's
    // count says (it may not be in it yet), so one counted twice would queue behind itself.
    postChat(h, CHAT_BODY, LOOSE, 0);
    await h.redisIdle();
    h.advance(500); // the ticks: each worker publishes, and exchanges, its record
    await h.redisIdle();
    expect(Object.values(await t.client.hgetall(`${NS}:rec`)).filter((v) => v.includes("\n10.0.0.1:8000 "))).toHaveLength(1);
    const mine = postChat(h, CHAT_BODY, LOOSE, 1).s;
    await h.redisIdle();
    start(mine);
    const w = String(mine.response.headers["x-llmlb-debug"] ?? "").match(/:wait=([0-9.]+)/);
    expect(w).not.toBeNull();
    // One pending stream of 16 tokens ahead of the one slot: its decode, ~150 ms (twice: ~300).
    expect(Number(w![1])).toBeGreaterThan(100);
    expect(Number(w![1])).toBeLessThan(220);
    // Both workers' records are in Redis all the same (other gateways read them).
    expect(Object.keys(await t.client.hgetall(`${NS}:rec`))).toHaveLength(2);
  });

  it("gateways of two workers: one exchange per Envoy and period, whose reply every worker reads from the shared data", async () => {
    const { b } = await twoGateways(20, 2);
    // B's records in Redis: one per worker, both sent by whichever worker exchanged.
    expect(Object.keys(await t.client.hgetall(`${NS}:rec`))).toHaveLength(4);
    b.advance(1000);
    const sentBefore = b.redisSent.length;
    const picks = [];
    for (const vm of [0, 1, 0, 1]) {
      const { s } = postChat(b, CHAT_BODY, LOOSE, vm);
      await b.redisIdle();
      picks.push(s);
      b.advance(4); // four picks within one period (20 ms)
    }
    const exchanges = b.redisSent.slice(sentBefore).filter((c) => c.query.includes("records"));
    expect(exchanges.map((c) => c.vm)).toEqual([0]); // one for the Envoy, sent by the first to find it due
    // Worker 1 sent none, yet its first pick counts A's stream by its progress (~1 s of 2 s left,
    // then worker 0's pending stream).
    start(picks[1]);
    const debug = String(picks[1].response.headers["x-llmlb-debug"] ?? "");
    const w = debug.match(/:wait=([0-9.]+)/);
    expect(w, debug).not.toBeNull();
    expect(Number(w![1]), debug).toBeGreaterThan(800);
    // The next period: again one exchange, by whichever worker's pick finds it due.
    b.advance(20);
    const again = b.redisSent.length;
    for (const vm of [1, 0]) {
      postChat(b, CHAT_BODY, LOOSE, vm);
      await b.redisIdle();
    }
    expect(b.redisSent.slice(again).filter((c) => c.query.includes("records")).map((c) => c.vm)).toEqual([1]);
  });

  it("a claim of the Envoy's exchange holds until its time, unless it is past any period (a clock that jumped back)", async () => {
    const a = await gateway({ sloShareReplicasMs: 20 }, 0);
    const claim = `llmlb:rxc:${NS}`;
    const exchangesAfter = async (claimAt: number): Promise<number> => {
      a.advance(1000); // past any interval of the exchanges so far
      await a.redisIdle(); // a tick's exchange answered (its reply sets the claim's time)
      a.plugin.sharedData.set("", claim, Buffer.from(String(claimAt)), 0);
      const before = a.redisSent.length;
      postChat(a, CHAT_BODY, LOOSE);
      await a.redisIdle();
      return a.redisSent.slice(before).filter((c) => c.query.includes("records")).length;
    };
    expect(await exchangesAfter(a.now + 1000 + 30_000)).toBe(0); // another worker's claim, or a long interval
    expect(await exchangesAfter(a.now + 1000 + 3_600_000)).toBe(1); // an hour ahead: a clock that went back
  });

  it("counts the other replicas' VMs seen in llmlb_slo_replicas_seen, none once the configuration is replaced", async () => {
    const a = await gateway({ sloShareReplicasMs: 20 }, 0);
    const b = await gateway({ sloShareReplicasMs: 20 }, 3_600_000);
    // b's exchanges saw a at once; a, alone when it taught, exchanges every 500 ms until it sees b.
    expect(b.metric("llmlb_slo_replicas_seen")).toBe(1);
    expect(a.metric("llmlb_slo_replicas_seen")).toBe(0);
    a.advance(500);
    await a.redisIdle();
    expect(a.metric("llmlb_slo_replicas_seen")).toBe(1);
    b.updateConfiguration(b.plugin.options.configuration);
    expect(b.metric("llmlb_slo_replicas_seen")).toBe(0);
    const off = await gateway({}, 0);
    expect(off.metric("llmlb_slo_replicas_seen")).toBe(0);
  });

  it("refuses a period under 5 ms, and the exchange without sloShareWorkers, naming the key", async () => {
    for (const [extra, why] of [
      [{ sloShareReplicasMs: 3 }, /sloShareReplicasMs must be 0 \(off\) or at least 5/],
      [{ sloShareReplicasMs: 20, sloShareWorkers: false }, /sloShareReplicasMs needs lb_config.sloShareWorkers/],
    ] as const) {
      const h = await host({ configuration: { lb_policy: "predicted_latency", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, ...extra } }, redis: { url: t.redis.url } });
      opened.push(h);
      expect(h.configured.every(Boolean)).toBe(false);
      expect(h.logs("warn").map((r) => r.message).join("; ")).toMatch(why);
    }
  });
});
