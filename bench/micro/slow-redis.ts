// A Redis that answers, but slower than a pick may wait: what share of the requests wait their
// whole pick deadline in vain, and how many picks still go through Redis. Through the host facade
// (virtual clock, a recorded Redis answering every call RTT ms after it was sent), 200 requests
// a second for 4 s plus 2 x RTT, the first 2 x RTT left out (the breaker's first misses).
// Usage: npx tsx bench/micro/slow-redis.ts [wasm] — RESULTS.md section 14.2.
// Failure behaviour: throws if the module is missing (run `npm run build` first).
import { TestHost, type HostSpec } from "../../host-test/facade/index.js";

const WASM = process.argv[2] ?? "build/ai-load-balancer.wasm";
const CLUSTER = "outbound|8000||vllm.static";
const HOSTS: HostSpec[] = [{ address: "10.0.0.1:8000", health: "Healthy" }, { address: "10.0.0.2:8000", health: "Healthy" }];
const BODY = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello" }], max_tokens: 16 });
const OK = (addr: string) => `*3\r\n$2\r\nOK\r\n$${addr.length}\r\n${addr}\r\n$1\r\n1\r\n`; // acquire.lua's reply
const STEP = 5;

async function run(rtt: number): Promise<string> {
  const h = await TestHost.create({
    wasm: WASM, clusters: { [CLUSTER]: HOSTS }, redisClusters: ["outbound|6379||redis.static"], logLevel: "error", redis: "record",
    configuration: { lb_policy: "global_least_request", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 3000 } },
  });
  const sentAt = new Map<object, number>();
  const open: Array<{ s: ReturnType<TestHost["stream"]>; at: number }> = [];
  const waits: number[] = [];
  const end = 2 * rtt + 4000;
  for (let t = 0; t < end; t += STEP) {
    const s = h.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route: "llm", headers: { "content-type": "application/json" } });
    s.sendRequestHeaders(false);
    s.sendRequestBody(BODY, true);
    open.push({ s, at: t });
    for (const c of h.redisCalls) if (!sentAt.has(c)) sentAt.set(c, t);
    for (const c of [...h.redisCalls]) {
      if (c.settled || t - sentAt.get(c)! < rtt) continue;
      c.reply(c.text.includes("TIME") ? `*2\r\n$10\r\n${Math.floor(Date.now() / 1000)}\r\n$1\r\n0\r\n` : OK(HOSTS[0].address));
    }
    h.advance(STEP);
    for (const x of [...open]) {
      if (!x.s.forwarded) continue;
      if (x.at >= 2 * rtt) waits.push(t + STEP - x.at);
      open.splice(open.indexOf(x), 1);
      x.s.complete();
    }
  }
  const viaRedis = h.metric("llmlb_picks_total", { policy: "global_least_request", reason: "least_request" });
  // A Redis faster than the deadline must carry the picks: otherwise the set-up is wrong (e.g. the
  // Redis cluster not declared, so redis_init fails and every pick falls back).
  if (rtt < 50 && viaRedis === 0) throw new Error(`no pick went through a Redis of ${rtt} ms: the set-up is wrong`);
  const waited = waits.filter((w) => w >= 50).length;
  h.close();
  return `| ${rtt} | ${waits.length} | ${(100 * waited / waits.length).toFixed(0)}% | ${viaRedis} |`;
}

console.log(`${WASM}\n| Redis RTT (ms) | requests measured | waited >= 50 ms (the deadline) | picks through Redis |\n|---:|---:|---:|---:|`);
for (const rtt of [20, 60, 100, 500, 2000]) console.log(await run(rtt));
