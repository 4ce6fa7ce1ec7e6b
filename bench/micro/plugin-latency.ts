// Added latency per request: the same requests through two local gateways in front of the same
// simulated pods, one with the plugin (global_least_request, Redis) and one without it (Envoy round
// robin), interleaved one by one so machine noise hits both alike. Upstream work is made tiny
// (tiny profile, 1 output token, time scale 1000) so the difference is the plugin: filter
// callbacks, body buffering, one Redis round trip (EVALSHA) and the release. Also reports the
// prefix_cache plugin the same way, and global_least_request on a gateway that ignores the
// plugin's Redis flush parameters (Higress < 2.2: Envoy's 3 ms write batching on every call).
// The host emulates Envoy's Redis write batching (host-test/README.md, row 4).
// Run: npm run bench -- plugin-latency
import http from "node:http";
import { startRedis } from "../../host-test/redis-server.js";
import { startSimFleet } from "../../host-test/sim/fleet.js";
import { localGatewayConfig, redisLbConfig } from "../../host-test/local-stack.js";
import { startGateway, type Gateway, type GatewayOptions } from "../../host-test/gateway/server.js";
import { RedisClusterClient } from "../../host-test/gateway/redis-client.js";
import { encodeCommand } from "../../host-test/resp.js";
import { nearestRank } from "../metrics.js";

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(`${url}/v1/chat/completions`, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
      res.resume();
      res.on("end", () => (res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const pct = nearestRank;

export interface LatencyRow { setup: string; p50: number; p99: number; addedP50: number; addedP99: number }

export async function runPluginLatency(requests = 600): Promise<LatencyRow[]> {
  const redis = await startRedis();
  const fleet = await startSimFleet(4, { profile: "tiny", timeScale: 1000 });
  const endpoints = fleet.pods.map((p) => `${p.host}:${p.port}`);
  const gateways: Record<string, Gateway> = {};
  const glr = { lb_policy: "global_least_request", lb_config: redisLbConfig(redis.port) };
  const setups: Array<[string, Record<string, unknown> | null, GatewayOptions]> = [
    ["no plugin (Envoy round robin)", null, {}],
    ["global_least_request", glr, {}],
    ["prefix_cache", { lb_policy: "prefix_cache", lb_config: redisLbConfig(redis.port) }, {}],
    ["global_least_request, Higress < 2.2 (3 ms batching)", glr, { profile: { redisFlushParams: "ignored" } }],
  ];
  try {
    for (const [name, plugin, options] of setups) {
      gateways[name] = await startGateway(localGatewayConfig({ endpoints, redisPort: redis.port, plugin, workers: 2, adminPort: null, logLevel: "warn" }), options);
    }
    const body = JSON.stringify({ model: "sim-tiny", messages: [{ role: "system", content: "be brief ".repeat(40) }, { role: "user", content: "hi" }], max_tokens: 1 });
    const samples: Record<string, number[]> = Object.fromEntries(setups.map(([n]) => [n, []]));
    for (let i = 0; i < requests + 50; i++) {
      for (const [name] of setups) {
        const ms = await post(gateways[name].url, body);
        if (i >= 50) samples[name].push(ms); // the first 50 warm up JIT, connections and script caches
      }
    }
    const base = samples[setups[0][0]];
    return setups.map(([name]) => {
      const s = samples[name];
      return { setup: name, p50: pct(s, 0.5), p99: pct(s, 0.99), addedP50: pct(s, 0.5) - pct(base, 0.5), addedP99: pct(s, 0.99) - pct(base, 0.99) };
    });
  } finally {
    for (const g of Object.values(gateways)) await g.close();
    await fleet.close();
    await redis.stop();
    agent.destroy();
  }
}

/**
 * One Redis call's round trip through the emulated Envoy client, written at once (the plugin's
 * flush parameters) and with Envoy's default batching (3 ms / 1024 bytes), interleaved.
 */
export async function runRedisFlush(calls = 600): Promise<Array<{ setup: string; p50: number; p99: number }>> {
  const redis = await startRedis();
  const setups: Array<[string, number, number]> = [["redis call, written at once (0 / 0)", 0, 0], ["redis call, Envoy default batching (3 ms / 1024 B)", 3, 1024]];
  const clients = setups.map(([, t, m]) => new RedisClusterClient({ host: redis.host, port: redis.port, timeoutMs: 5000, bufferFlushTimeoutMs: t, maxBufferSizeBeforeFlush: m }));
  try {
    const samples: number[][] = setups.map(() => []);
    const query = encodeCommand(["INCR", "bench-flush"]);
    for (let i = 0; i < calls + 50; i++) {
      for (let k = 0; k < clients.length; k++) {
        const t0 = process.hrtime.bigint();
        await clients[k].call(query);
        if (i >= 50) samples[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }
    return setups.map(([setup], k) => ({ setup, p50: pct(samples[k], 0.5), p99: pct(samples[k], 0.99) }));
  } finally {
    for (const c of clients) c.close();
    await redis.stop();
  }
}

export function flushTable(rows: Array<{ setup: string; p50: number; p99: number }>): string {
  return ["| Redis client | p50 ms | p99 ms |", "|---|---|---|", ...rows.map((r) => `| ${r.setup} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`)].join("\n");
}

export function latencyTable(rows: LatencyRow[]): string {
  const f = (x: number) => x.toFixed(2);
  return ["| gateway | p50 ms | p99 ms | added p50 ms | added p99 ms |", "|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.setup} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.addedP50)} | ${f(r.addedP99)} |`)].join("\n");
}

if (process.argv[1]?.endsWith("plugin-latency.ts")) {
  console.log(latencyTable(await runPluginLatency(Number(process.argv[2] ?? 600))));
  console.log(flushTable(await runRedisFlush(Number(process.argv[2] ?? 600))));
}
