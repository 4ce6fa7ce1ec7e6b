// The plugin's CPU per request at gateway scale, through the real exports (host-test facade, real
// redis-server): P candidate pods, chat bodies of B bytes, O streams left open (streamed answers
// in progress), then N requests, each sent, picked (Redis replies included), started and, once
// more than O are open, the oldest one finished. Measured: the wall time spent inside the
// plugin's callbacks (outermost WasmVm.invoke: Wasm code plus the host imports it calls), summed
// over the N requests, per request. Several builds (`--wasm a.wasm,b.wasm`) run the same
// requests interleaved one by one, each with its own Redis, so the machine's load hits them
// alike: compare the ratio, not the µs.
// Run: npm run bench -- request-cost [--wasm a,b] [--pods 256] [--kb 1,100] [--open 512]
//      [--requests 200] [--policies predicted_latency,prefix_cache,global_least_request,endpoint_metrics]
import { startRedis, type RedisFixture } from "../../host-test/redis-server.js";
import { TestHost, type TestStream } from "../../host-test/facade/index.js";
import { finishSse, startSse } from "../../host-test/facade/sse-answers.js";
import { WasmVm } from "../../host-test/abi/vm.js";
import { chatBody, withLineBreaks } from "./chat-body.js";

const CLUSTER = "outbound|8000||vllm.static";

// Time inside the plugin: the outermost invoke of any VM.
let inPlugin = 0;
let depth = 0;
const invoke = WasmVm.prototype.invoke;
WasmVm.prototype.invoke = function (this: WasmVm, name: string, contextId: number, args: Array<number | bigint>) {
  if (depth > 0) return invoke.call(this, name, contextId, args);
  depth++;
  const t0 = process.hrtime.bigint();
  try { return invoke.call(this, name, contextId, args); } finally {
    inPlugin += Number(process.hrtime.bigint() - t0);
    depth--;
  }
};

interface Setup { wasm: string; host: TestHost; redis: RedisFixture; open: TestStream[]; ns: number }

async function setup(wasm: string, policy: string, pods: number): Promise<Setup> {
  const redis = await startRedis();
  const host = await TestHost.create({
    wasm, logLevel: "critical", redis: { url: redis.url }, redisClusters: ["outbound|6379||redis.static"],
    clusters: { [CLUSTER]: Array.from({ length: pods }, (_, i) => ({ address: `10.0.${i >> 8}.${i & 255}:8000` })) },
    configuration: { lb_policy: policy, lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 500, modelBatchSlots: 8, sloExploration: 0 } },
  });
  return { wasm, host, redis, open: [], ns: 0 };
}

/** One request: sent, picked, its answer started; the oldest open one finished beyond `open`. */
async function oneRequest(s: Setup, body: Buffer, open: number): Promise<void> {
  const t = s.host.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route: "llm", headers: { "content-type": "application/json" } });
  t.sendRequestHeaders(false);
  t.sendRequestBody(body, true);
  await s.host.redisIdle();
  startSse(t);
  s.open.push(t);
  if (s.open.length > open) finishSse(s.open.shift()!);
  await s.host.redisIdle();
  s.host.advance(1);
}

/** Request `i`'s body: `base` in one of SESSIONS conversations (its first message says which), with
 *  a last user turn of its own: each conversation's earlier turns are prefix levels already in
 *  the tree after its first request (a multi-turn chat's follow-ups, as a busy gateway sees). */
const SESSIONS = 16;
function bodyFor(base: Uint8Array, i: number): Buffer {
  // Real prompts hold line breaks: JSON escapes in every message.
  const text = withLineBreaks(base).toString("utf8").replace("\"content\":\"", `"content":"s${i % SESSIONS} `);
  return Buffer.from(text.replace("\"}],\"max_tokens\"", ` q${i}"}],"max_tokens"`));
}

export interface RequestCostRow { policy: string; pods: number; kb: number; open: number; usPerRequest: number[] }

export async function runRequestCost(wasms: string[], policy: string, pods: number, kb: number, open: number, requests: number): Promise<RequestCostRow> {
  const setups: Setup[] = [];
  try {
    for (const w of wasms) setups.push(await setup(w, policy, pods));
    const base = chatBody(kb * 1024);
    // Warm-up (V8 tiers the Wasm up) and the open streams, not timed.
    for (let i = 0; i < open + 50; i++) for (const s of setups) await oneRequest(s, bodyFor(base, i), open);
    const sums = setups.map(() => 0);
    for (let i = 0; i < requests; i++) {
      const body = bodyFor(base, open + 50 + i);
      for (let k = 0; k < setups.length; k++) {
        const before = inPlugin;
        await oneRequest(setups[k], body, open);
        sums[k] += inPlugin - before;
      }
    }
    return { policy, pods, kb, open, usPerRequest: sums.map((ns) => ns / 1000 / requests) };
  } finally {
    for (const s of setups) { s.host.close(); await s.redis.stop(); }
  }
}

export function requestCostTable(wasms: string[], rows: RequestCostRow[]): string {
  const head = `| policy | pods | body KiB | streams open | ${wasms.map((w) => `${w} µs/request`).join(" | ")}${wasms.length > 1 ? " | ratio first/last" : ""} |`;
  const sep = `|${"---|".repeat(4 + wasms.length + (wasms.length > 1 ? 1 : 0))}`;
  return [head, sep, ...rows.map((r) => `| ${r.policy} | ${r.pods} | ${r.kb} | ${r.open} | ${r.usPerRequest.map((u) => u.toFixed(1)).join(" | ")}${
    wasms.length > 1 ? ` | ${(r.usPerRequest[0] / r.usPerRequest[r.usPerRequest.length - 1]).toFixed(2)}x` : ""} |`)].join("\n");
}

function arg(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
}

export async function requestCostMain(args: string[]): Promise<void> {
  const wasms = arg(args, "wasm", "build/ai-load-balancer.wasm").split(",");
  const pods = Number(arg(args, "pods", "256"));
  const open = Number(arg(args, "open", "512"));
  const requests = Number(arg(args, "requests", "200"));
  const rows: RequestCostRow[] = [];
  for (const policy of arg(args, "policies", "predicted_latency,prefix_cache,global_least_request,endpoint_metrics").split(",")) {
    for (const kb of arg(args, "kb", "1,100").split(",").map(Number)) rows.push(await runRequestCost(wasms, policy, pods, kb, open, requests));
  }
  console.log(requestCostTable(wasms, rows));
}

if (process.argv[1]?.endsWith("request-cost.ts")) await requestCostMain(process.argv.slice(2));
