// Memory and cost over a long run: N requests (default 1,000,000) through the test facade with the
// release .wasm, every policy at once (global_least_request, prefix_cache, prefix_cache compat,
// endpoint_metrics, global_least_request against an unreachable Redis, and predicted_latency with
// late binding, about half of its requests held a while), mixed bodies (short
// and 16 KB chats, long multi-turn chats, completions, Responses, invalid JSON, empty), and mixed
// endings (answered, aborted after the pick, aborted while Redis is still answering). Requests go
// round robin over the policies in batches of 32; the manual clock moves 100 ms per batch, so
// ticks (lease renewals, scrapes) run as well.
// At each checkpoint (10k, 100k, 1M, and N) it prints: Wasm linear memory pages of every VM, the
// Node heap after a full GC, and the pick cost = median wall-clock µs of the plugin's synchronous
// request path (request headers + body callbacks, Redis round trip excluded) per policy over the
// last 2,000 requests. Flat memory and an equal cost at the last checkpoint and at 10k are the pass criteria.
// Run: npm run bench -- soak-memory [requests]
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { startRedis } from "../../host-test/redis-server.js";
import { TestHost, type HostSpec, type TestStream } from "../../host-test/facade/index.js";
import { finishSse, startSse } from "../../host-test/facade/sse-answers.js";
import { chatBody } from "./costs.js";
import { percentile } from "../metrics.js";

const WASM = "build/ai-load-balancer.wasm";
const CLUSTER = "outbound|8000||vllm.static";
const WINDOW = 2000;
const BATCH = 32;

function forceGc(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

function metrics(waiting: number): string {
  return `vllm:num_requests_running{engine="0",model_name="m"} 1.0\nvllm:num_requests_waiting{engine="0",model_name="m"} ${waiting}.0\n` +
    `vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.${waiting}\n`;
}

const HOSTS: HostSpec[] = Array.from({ length: 8 }, (_, i) => ({ address: `10.0.0.${i + 1}:8000`, metrics: metrics(i) }));

/** Request bodies, chosen by request number (deterministic mix). */
function bodies(): Array<(n: number) => string | Buffer> {
  const big = Buffer.from(chatBody(16 * 1024));
  return [
    (n) => JSON.stringify({ model: "m", messages: [{ role: "system", content: "be brief" }, { role: "user", content: `question ${n % 997}` }] }),
    (n) => JSON.stringify({ model: `model-${n % 7}`, messages: Array.from({ length: 2 + (n % 40) }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `turn ${i} of ${n % 101}` })) }),
    () => big,
    (n) => JSON.stringify({ model: "m", prompt: `Once upon a time ${n % 13} `.repeat(50) }),
    (n) => JSON.stringify({ model: "m", instructions: "x", input: [{ role: "user", content: `hi ${n % 5}` }, { type: "function_call_output", call_id: "c", output: "42" }] }),
    () => "{not json",
    () => "",
  ];
}

interface Checkpoint { requests: number; pages: number[]; heapMiB: number; pickMicros: number[] }

export async function runSoakMemory(total = 1_000_000): Promise<Checkpoint[]> {
  const redis = await startRedis();
  const redisCfg = { serviceFQDN: "redis.static", servicePort: 6379, timeout: 500 };
  const configs: Array<[object, string]> = [
    [{ lb_policy: "global_least_request", lb_config: redisCfg }, redis.url],
    [{ lb_policy: "prefix_cache", lb_config: redisCfg }, redis.url],
    [{ lb_policy: "prefix_cache", lb_config: { ...redisCfg, compat: true } }, redis.url],
    [{ lb_policy: "endpoint_metrics", lb_config: {} }, redis.url],
    [{ lb_policy: "global_least_request", lb_config: { ...redisCfg, timeout: 50 } }, "redis://127.0.0.1:1"], // Redis errors
    // Late binding: 8 pods x 2 slots for batches of 32, so about half of each batch is held until
    // the previous batch's streams end (or sloHoldMs passes); SLOs from the route's defaults.
    [{ lb_policy: "predicted_latency", lb_config: { ...redisCfg, modelBatchSlots: 2, sloHoldMs: 300, sloTtftMs: 250, sloTpotMs: 50 } }, redis.url],
  ];
  const hosts: TestHost[] = [];
  try {
    for (const [configuration, url] of configs) {
      hosts.push(await TestHost.create({ wasm: WASM, configuration, clusters: { [CLUSTER]: HOSTS }, redisClusters: ["outbound|6379||redis.static"], logLevel: "critical", redis: { url } }));
    }
    const makeBody = bodies();
    const marks = [10_000, 100_000, 250_000, 500_000, 750_000, 1_000_000].filter((m) => m < total).concat([total]);
    const out: Checkpoint[] = [];
    const windows: number[][] = hosts.map(() => []);
    // Streams not ended yet, per host: a held one (not forwarded yet) is answered in a later batch.
    const waiting: TestStream[][] = hosts.map(() => []);
    let n = 0;
    while (n < total) {
      for (const [hi, h] of hosts.entries()) {
        const window = windows[hi];
        const open = waiting[hi];
        for (let b = 0; b < BATCH && n < total; b++, n++) {
          const s = h.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route: "llm", headers: { "content-type": "application/json" } });
          const body = makeBody[n % makeBody.length](n);
          const t0 = process.hrtime.bigint();
          s.sendRequestHeaders(false);
          s.sendRequestBody(body, true);
          window.push(Number(process.hrtime.bigint() - t0) / 1000);
          if (window.length > WINDOW / hosts.length) window.shift();
          if (n % 11 === 3) s.abort(); // aborted while Redis is answering
          else open.push(s);
          if (marks.includes(n + 1)) out.push(checkpoint(n + 1, hosts, windows));
        }
        await h.redisIdle();
        const held: TestStream[] = [];
        for (const [i, s] of open.entries()) {
          if (s.ended !== null) continue;
          if (s.forwarded === null && !s.localResponse) { held.push(s); continue; }
          if (i % 7 === 5) s.abort(); // aborted after the pick
          else answer(s);
        }
        waiting[hi] = held;
        h.advance(100);
        await h.redisIdle();
      }
    }
    return out;
  } finally {
    for (const h of hosts) h.close();
    await redis.stop();
  }
}

/** A streamed answer of two tokens (predicted_latency learns TTFT and TPOT from it), then the end. */
function answer(s: TestStream): void {
  startSse(s);
  finishSse(s);
}

function checkpoint(requests: number, hosts: TestHost[], windows: number[][]): Checkpoint {
  forceGc();
  const pages = hosts.flatMap((h) => h.vms.map((vm) => (vm.instance.exports.memory as WebAssembly.Memory).buffer.byteLength / 65536));
  // Median, not mean: a sample that a neighbour process preempted must not move the comparison.
  const pickMicros = windows.map((w) => percentile([...w].sort((a, b) => a - b), 50));
  const c = { requests, pages, heapMiB: process.memoryUsage().heapUsed / 2 ** 20, pickMicros };
  process.stderr.write(`soak-memory: ${requests} requests, pages ${pages.join("/")}, heap ${c.heapMiB.toFixed(1)} MiB, pick ${pickMicros.map((x) => x.toFixed(1)).join("/")} µs\n`);
  return c;
}

export function soakTable(rows: Checkpoint[]): string {
  return ["| requests | Wasm pages per VM (GLR / prefix / prefix compat / metrics / GLR Redis down / predicted_latency holding) | Node heap MiB after GC | pick µs, same order (median of the last 2,000 requests) |", "|---|---|---|---|",
    ...rows.map((r) => `| ${r.requests.toLocaleString("en-US")} | ${r.pages.join(" / ")} | ${r.heapMiB.toFixed(1)} | ${r.pickMicros.map((x) => x.toFixed(0)).join(" / ")} |`)].join("\n");
}

if (process.argv[1]?.endsWith("soak-memory.ts")) {
  console.log(soakTable(await runSoakMemory(Number(process.argv[2] ?? 1_000_000))));
}
