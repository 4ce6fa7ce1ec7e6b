// The cost of late binding's passes over the held requests (predicted_latency, sloHoldMs) under an
// overload: P pods of one batch slot, all busy, H requests held (every pod full), then
//  - a tick pass (the 10 ms tick re-evaluates the held list: nothing can go),
//  - a stream end (one slot frees: one held request goes, the rest are checked again),
// each timed as the wall-clock µs of the facade call that runs it (the plugin's Wasm plus the
// host calls it makes; Redis replies excluded: the facade call returns before they come).
// With W workers (one Envoy, W VMs: requests spread over them, sloShareWorkers on) each call runs
// every VM's part (the tick: each VM's pass, reading and writing its record for its siblings).
// Run: npx tsx bench/micro/hold-pass.ts [pods=64] [held=512] [wasm=build/ai-load-balancer.wasm] [workers=1]
import { startRedis } from "../../host-test/redis-server.js";
import { TestHost, type TestStream } from "../../host-test/facade/index.js";
import { finishSse, startSse, teachSse } from "../../host-test/facade/sse-answers.js";
import { percentile } from "../metrics.js";

const CLUSTER = "outbound|8000||vllm.static";
const BODY = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello" }], max_tokens: 16 });
function post(h: TestHost): TestStream {
  const s = h.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route: "llm", headers: { "content-type": "application/json" } });
  s.sendRequestHeaders(false);
  s.sendRequestBody(BODY, true);
  return s;
}

const usOf = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1000;

export async function runHoldPass(pods: number, held: number, wasm: string, workers = 1): Promise<{ tick: number; streamEnd: number; held: number }> {
  const redis = await startRedis();
  const h = await TestHost.create({
    wasm, logLevel: "critical", redis: { url: redis.url }, redisClusters: ["outbound|6379||redis.static"], workers,
    clusters: { [CLUSTER]: Array.from({ length: pods }, (_, i) => ({ address: `10.0.${i >> 8}.${i & 255}:8000` })) },
    configuration: { lb_policy: "predicted_latency", lb_config: {
      serviceFQDN: "redis.static", servicePort: 6379, timeout: 500, modelBatchSlots: 1, sloHoldMs: 600000, ...(held > 512 ? { sloHoldMax: held } : {}),
      sloTtftMs: 100000, sloTpotMs: 100000, sloExploration: 0 } },
  });
  try {
    // Taught: every pod answers (TTFT 20 ms, TPOT 10 ms), one request at a time.
    await teachSse(h, () => post(h), 3 * pods);
    // Every pod busy with an open stream.
    const busy: TestStream[] = [];
    for (let i = 0; i < pods; i++) { const s = post(h); await h.redisIdle(); startSse(s); busy.push(s); }
    // Held: every pod is full.
    const waiting: TestStream[] = [];
    for (let i = 0; i < held; i++) waiting.push(post(h));
    await h.redisIdle();
    const heldNow = waiting.filter((s) => s.forwarded === null).length;
    const ticks: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t0 = process.hrtime.bigint();
      h.advance(10);
      ticks.push(usOf(t0));
      await h.redisIdle();
    }
    const ends: number[] = [];
    for (let i = 0; i < Math.min(50, busy.length); i++) {
      const t0 = process.hrtime.bigint();
      finishSse(busy[i]);
      ends.push(usOf(t0));
      await h.redisIdle();
      const sent = waiting.find((s) => s.forwarded !== null && s.response.status === null);
      if (sent) { startSse(sent); busy.push(sent); }
    }
    const med = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);
    return { tick: med(ticks), streamEnd: med(ends), held: heldNow };
  } finally {
    h.close();
    await redis.stop();
  }
}

if (process.argv[1]?.endsWith("hold-pass.ts")) {
  const [pods, held, wasm, workers] = [Number(process.argv[2] ?? 64), Number(process.argv[3] ?? 512), process.argv[4] ?? "build/ai-load-balancer.wasm", Number(process.argv[5] ?? 1)];
  const r = await runHoldPass(pods, held, wasm, workers);
  console.log(`| ${pods} | ${r.held} | ${workers} | ${r.tick.toFixed(0)} | ${r.streamEnd.toFixed(0)} | ${wasm} |`);
}
