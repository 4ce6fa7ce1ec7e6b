// The cost of predicted_latency's worker records (sloShareWorkers) at scale: one Envoy of W
// workers (W VMs), P pods of S batch slots, N streams open and started (spread over the workers),
// then 200 requests 1 ms apart, each a pick and a stream end (the oldest stream's). A VM reads its
// siblings' records at most every ms and parses them when one changed, which every pick and end
// does, so each pick here parses every sibling's record (about N lines in all): the worst case.
// Reported: the median µs of a pick (the facade calls that send the request, then the Redis
// replies that make the pick: the Redis round trip is in it, equal with sharing on and off), of a
// stream end (its record written), and the process CPU µs per request (pick, start, end), sharing
// on and off. `npm run bench -- share-cost` runs a warm-up first (V8 tiers the Wasm code up while
// it runs); a run of this file alone does not.
// Run: npx tsx bench/micro/share-cost.ts [workers=8] [pods=16] [slots=64] [open=800] [share=1] [wasm]
import { startRedis } from "../../host-test/redis-server.js";
import { TestHost, type TestStream } from "../../host-test/facade/index.js";
import { finishSse, startSse, teachSse } from "../../host-test/facade/sse-answers.js";
import { percentile } from "../metrics.js";

const CLUSTER = "outbound|8000||vllm.static";
const BODY = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello" }], max_tokens: 16 });
const SLO = { "x-slo-ttft-ms": "100000", "x-slo-tpot-ms": "100000" };
const REQUESTS = 200;

export interface ShareCost { pick: number; end: number; cpuPerRequest: number }

export async function runShareCost(workers: number, pods: number, slots: number, open: number, share: boolean, wasm: string): Promise<ShareCost> {
  const redis = await startRedis();
  const h = await TestHost.create({
    wasm, logLevel: "critical", redis: { url: redis.url }, redisClusters: ["outbound|6379||redis.static"], workers,
    clusters: { [CLUSTER]: Array.from({ length: pods }, (_, i) => ({ address: `10.0.${i >> 8}.${i & 255}:8000` })) },
    configuration: { lb_policy: "predicted_latency", lb_config: {
      serviceFQDN: "redis.static", servicePort: 6379, timeout: 500, modelBatchSlots: slots, sloExploration: 0, sloShareWorkers: share } },
  });
  let vm = 0;
  const post = (): TestStream => {
    const s = h.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route: "llm", vm: vm++ % workers, headers: { "content-type": "application/json", ...SLO } });
    s.sendRequestHeaders(false);
    s.sendRequestBody(BODY, true);
    return s;
  };
  const us = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1000;
  try {
    await teachSse(h, post, 3 * pods);
    const live: TestStream[] = [];
    for (let i = 0; i < open; i++) {
      const s = post();
      await h.redisIdle();
      startSse(s);
      live.push(s);
      if (i % 50 === 0) h.advance(1);
    }
    const picks: number[] = [];
    const ends: number[] = [];
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < REQUESTS; i++) {
      h.advance(1);
      const t0 = process.hrtime.bigint();
      const s = post();
      await h.redisIdle();
      picks.push(us(t0));
      startSse(s);
      live.push(s);
      h.advance(1);
      const t1 = process.hrtime.bigint();
      finishSse(live.shift()!);
      ends.push(us(t1));
      await h.redisIdle();
    }
    const cpu = process.cpuUsage(cpu0);
    const med = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);
    return { pick: med(picks), end: med(ends), cpuPerRequest: (cpu.user + cpu.system) / REQUESTS };
  } finally {
    h.close();
    await redis.stop();
  }
}

export const SHARE_COST_HEADER = "| workers | pods x slots | streams open | sharing | pick µs (median) | stream end µs (median) | CPU µs per request |\n|---|---|---|---|---|---|---|";

export function shareCostRow(workers: number, pods: number, slots: number, open: number, share: boolean, r: ShareCost): string {
  return `| ${workers} | ${pods} x ${slots} | ${open} | ${share ? "on" : "off"} | ${r.pick.toFixed(0)} | ${r.end.toFixed(0)} | ${r.cpuPerRequest.toFixed(0)} |`;
}

if (process.argv[1]?.endsWith("share-cost.ts")) {
  const a = process.argv.slice(2);
  const [workers, pods, slots, open] = [Number(a[0] ?? 8), Number(a[1] ?? 16), Number(a[2] ?? 64), Number(a[3] ?? 800)];
  const share = (a[4] ?? "1") !== "0";
  console.log(SHARE_COST_HEADER);
  console.log(shareCostRow(workers, pods, slots, open, share, await runShareCost(workers, pods, slots, open, share, a[5] ?? "build/ai-load-balancer.wasm")));
}
