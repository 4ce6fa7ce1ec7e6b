// predicted_latency's records exchange (sloShareReplicasMs) through two local gateways of two
// workers each, one Redis and simulated pods, in wall time: each gateway's workers' records reach
// Redis in one exchange per period, and every worker of each gateway reads the other gateway's
// two records at its picks (llmlb_slo_replicas_seen: 2 workers x 2 records per gateway) while
// streams are open.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import { Redis } from "ioredis";
import { startLocalStack, redisLbConfig, SLOW_MACHINE_PICK_DEADLINE_MS, type LocalStack } from "../../host-test/local-stack.js";

let stack: LocalStack;
let redis: Redis;
beforeAll(async () => {
  stack = await startLocalStack({
    pods: 2, gateways: 2, workers: 2, healthCheckMs: 200,
    fleet: { profile: "tiny", timeScale: 1, profileOverrides: { stepBaseMs: 12 } },
    plugin: (port) => ({ lb_policy: "predicted_latency", lb_config: { ...redisLbConfig(port), pickDeadlineMs: SLOW_MACHINE_PICK_DEADLINE_MS, sloShareReplicasMs: 20 } }),
  });
  redis = new Redis(stack.redis.url);
}, 30_000);
afterAll(async () => { redis?.disconnect(); await stack?.close(); });

function chat(gw: number, maxTokens: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${stack.gateways[gw].url}/v1/chat/completions`, { method: "POST", agent: false, headers: { "content-type": "application/json", "x-slo-ttft-ms": "5000", "x-slo-tpot-ms": "1000" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(JSON.stringify({ model: "sim-tiny", messages: [{ role: "user", content: `hello ${gw}` }], max_tokens: maxTokens, ignore_eos: true, stream: true }));
  });
}

/** A plugin gauge of one gateway (its admin /stats/prometheus, summed over its workers). */
async function gauge(gw: number, name: string): Promise<number> {
  const text = await (await fetch(`${stack.gateways[gw].adminUrl}/stats/prometheus`)).text();
  const m = new RegExp(`^${name}(?:\\{\\})? (\\d+)$`, "m").exec(text);
  return m ? Number(m[1]) : -1;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("predicted_latency records exchange through two gateways of two workers", () => {
  it("each gateway's records reach Redis, and each worker reads the other gateway's", async () => {
    // Short requests first: every worker of each gateway picks (scripts loaded, records written).
    for (let i = 0; i < 8; i++) expect(await chat(i % 2, 2)).toBe(200);
    // Streams of ~5 s open on both gateways, several per gateway so both workers have one.
    const open = Array.from({ length: 8 }, (_, i) => chat(i % 2, 400));
    let records: Record<string, string> = {};
    let seen = [-1, -1];
    const short: Promise<number>[] = [];
    for (let t = 0; t < 40; t++) {
      // A worker reads the other gateway's records at its picks: keep each gateway's workers picking.
      short.push(chat(0, 1), chat(1, 1));
      await sleep(100);
      const keys = await redis.keys("*:rec");
      records = keys.length === 1 ? await redis.hgetall(keys[0]) : {};
      seen = [await gauge(0, "llmlb_slo_replicas_seen"), await gauge(1, "llmlb_slo_replicas_seen")];
      if (Object.keys(records).length === 4 && seen[0] === 4 && seen[1] === 4) break;
    }
    expect(Object.keys(records)).toHaveLength(4); // both workers of both gateways
    // Each record lists open streams ("<host> ..." lines after its head) for some worker.
    expect(Object.values(records).filter((v) => v.split("\n").length > 1).length).toBeGreaterThanOrEqual(2);
    expect(seen).toEqual([4, 4]);
    expect(await Promise.all(open)).toEqual(Array(8).fill(200));
    expect((await Promise.all(short)).every((st) => st === 200)).toBe(true);
  }, 40_000);
});
