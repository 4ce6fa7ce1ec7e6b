// Measures what the pick deadline (lb_config.pickDeadlineMs) is chosen from, through the local
// gateway with real Redis: the distribution of the plugin's Redis round trips under normal load
// (llmlb_redis_call_duration_ms, Envoy's bucket bounds), and the time to first byte of requests
// before and while Redis is frozen (SIGSTOP), with the fallback picks and failures counted.
// Usage: npx tsx bench/pick-deadline.ts [pickDeadlineMs=10] [seconds=8] [concurrency=8]
import http from "node:http";
import { startLocalStack, redisLbConfig } from "../host-test/local-stack.js";
import { sleep } from "./chaos-load.js";
import { nearestRank } from "./metrics.js";

const deadlineMs = Number(process.argv[2] ?? 10);
const seconds = Number(process.argv[3] ?? 8);
const concurrency = Number(process.argv[4] ?? 8);

/** One short non-streaming request: ms to response headers and the status. */
function ttfb(url: string): Promise<{ ms: number; status: number }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const body = JSON.stringify({ model: "sim-tiny", messages: [{ role: "user", content: "deadline" }], max_tokens: 2 });
    const req = http.request(`${url}/v1/chat/completions`, { method: "POST", agent: false, headers: { "content-type": "application/json" } }, (res) => {
      const ms = performance.now() - t0;
      res.resume();
      res.on("end", () => resolve({ ms, status: res.statusCode ?? 0 }));
    });
    req.on("error", () => resolve({ ms: performance.now() - t0, status: 0 }));
    req.end(body);
  });
}

async function load(url: string, ms: number): Promise<{ ms: number[]; failed: number }> {
  const out: number[] = [];
  let failed = 0;
  const end = Date.now() + ms;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < end) {
      const r = await ttfb(url);
      if (r.status === 200) out.push(r.ms); else failed++;
    }
  }));
  return { ms: out.sort((a, b) => a - b), failed };
}

const q = nearestRank;
const fmt = (xs: number[]) => `n=${xs.length} p50=${q(xs, 0.5).toFixed(1)} p99=${q(xs, 0.99).toFixed(1)} p99.9=${q(xs, 0.999).toFixed(1)} max=${q(xs, 1).toFixed(1)} ms`;

async function scrape(adminUrl: string): Promise<string> {
  const r = await fetch(`${adminUrl}/stats/prometheus`);
  return r.text();
}
const metric = (text: string, line: string) => {
  const m = text.split("\n").find((l) => l.startsWith(line));
  return m ? Number(m.slice(m.lastIndexOf(" ") + 1)) : 0;
};

const stack = await startLocalStack({
  pods: 4, gateways: 1, workers: 2, fleet: { profile: "tiny", timeScale: 1 },
  plugin: (port) => ({ lb_policy: "global_least_request", lb_config: { ...redisLbConfig(port), pickDeadlineMs: deadlineMs } }),
});
try {
  const gw = stack.gateways[0];
  await load(gw.url, 1000); // warm up
  const before = await scrape(gw.adminUrl!);
  const normal = await load(gw.url, seconds * 1000);
  const mid = await scrape(gw.adminUrl!);
  const hist = mid.split("\n").filter((l) => l.startsWith("llmlb_redis_call_duration_ms_bucket"));
  const fallbacksNormal = metric(mid, 'llmlb_picks_total{policy="global_least_request",reason="local_fallback"}') - metric(before, 'llmlb_picks_total{policy="global_least_request",reason="local_fallback"}');
  // Frozen Redis: requests started during the freeze (the breaker opens after breakerFailures misses).
  const frozen = load(gw.url, 3000);
  await sleep(50);
  stack.redis.pause();
  const during = await frozen;
  stack.redis.resume();
  await sleep(1500);
  const after = await scrape(gw.adminUrl!);
  const fallbacksFrozen = metric(after, 'llmlb_picks_total{policy="global_least_request",reason="local_fallback"}') - metric(mid, 'llmlb_picks_total{policy="global_least_request",reason="local_fallback"}');
  console.log(`pickDeadlineMs=${deadlineMs}, concurrency ${concurrency}, 1 gateway x 2 VMs, real Redis`);
  console.log(`Redis call duration histogram (all plugin calls, normal load):\n  ${hist.join("\n  ")}`);
  console.log(`normal load TTFB: ${fmt(normal.ms)}; failed ${normal.failed}; local_fallback picks ${fallbacksNormal}`);
  console.log(`Redis frozen TTFB: ${fmt(during.ms)}; failed ${during.failed}; local_fallback picks ${fallbacksFrozen}`);
  console.log(`pick_deadline misses total: ${metric(after, 'llmlb_redis_failures_total{kind="pick_deadline"}')}`);
} finally {
  await stack.close();
}
