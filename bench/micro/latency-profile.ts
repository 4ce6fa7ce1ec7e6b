// Where the added latency of global_least_request goes (issue 14): the same requests as
// plugin-latency.ts through a gateway with the plugin and one without, in one process, with
//  - the time inside the plugin's Proxy-Wasm callbacks (outermost WasmVm.invoke: Wasm code plus
//    the host imports it calls), summed per request and per callback name;
//  - the Redis round trip of each call (RedisClusterClient.call: write to reply).
// The rest of the added time is the Node host's own work around the callbacks (buffering the
// body, header maps, the upstream override, timers) and event-loop turns (the Redis reply is a
// separate I/O event), which Envoy does in C++. Run: npx tsx bench/micro/latency-profile.ts [n] [--light]
// (add node --cpu-prof through NODE_OPTIONS for a profile).
import http from "node:http";
import { startRedis } from "../../host-test/redis-server.js";
import { startSimFleet } from "../../host-test/sim/fleet.js";
import { localGatewayConfig, redisLbConfig } from "../../host-test/local-stack.js";
import { startGateway, type Gateway } from "../../host-test/gateway/server.js";
import { WasmVm } from "../../host-test/abi/vm.js";
import { RedisClusterClient } from "../../host-test/gateway/redis-client.js";
import { nearestRank } from "../metrics.js";

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const pct = nearestRank;
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

// Per-request accumulators, reset before each request.
let inImports = 0;
const perImport = new Map<string, number>();
const importCalls = new Map<string, number>();
let inWasm = 0;
let inRedis = 0;
let callbacks = 0;
const perCallback = new Map<string, number[]>();
let depth = 0;

// --light: only the Redis round trip is timed (no per-callback or per-import wrappers, whose own
// cost lands inside "added"): the un-inflated added latency beyond one round trip.
const light = process.argv.includes("--light");
const invoke = WasmVm.prototype.invoke;
if (!light) WasmVm.prototype.invoke = function (this: WasmVm, name: string, contextId: number, args: Array<number | bigint>) {
  if (depth > 0) return invoke.call(this, name, contextId, args);
  depth++;
  const t0 = nowMs();
  try {
    return invoke.call(this, name, contextId, args);
  } finally {
    const dt = nowMs() - t0;
    depth--;
    inWasm += dt;
    callbacks++;
    if (!perCallback.has(name)) perCallback.set(name, []);
    perCallback.get(name)!.push(dt);
  }
};
// Host imports (the host's work the plugin asks for: header maps, Redis writes, continuing the
// stream, which here also starts the upstream request) timed inside the callbacks.
const Instance = WebAssembly.Instance;
if (!light) (WebAssembly as { Instance: unknown }).Instance = function (module: WebAssembly.Module, imports: WebAssembly.Imports) {
  const env = imports.env as Record<string, unknown>;
  for (const [name, fn] of Object.entries(env)) {
    if (typeof fn !== "function") continue;
    env[name] = (...a: unknown[]) => {
      const t0 = nowMs();
      try { return (fn as (...x: unknown[]) => unknown)(...a); } finally {
        const dt = nowMs() - t0;
        inImports += dt;
        perImport.set(name, (perImport.get(name) ?? 0) + dt);
        importCalls.set(name, (importCalls.get(name) ?? 0) + 1);
      }
    };
  }
  return new Instance(module, imports);
} as unknown as typeof WebAssembly.Instance;
const call = RedisClusterClient.prototype.call;
RedisClusterClient.prototype.call = function (this: RedisClusterClient, query: Buffer) {
  const t0 = nowMs();
  return call.call(this, query).finally(() => { inRedis += nowMs() - t0; });
};

function post(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = nowMs();
    const req = http.request(`${url}/v1/chat/completions`, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
      res.resume();
      res.on("end", () => (res.statusCode === 200 ? resolve(nowMs() - t0) : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const requests = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 600);
const redis = await startRedis();
const fleet = await startSimFleet(4, { profile: "tiny", timeScale: 1000 });
const endpoints = fleet.pods.map((p) => `${p.host}:${p.port}`);
const gateways: Gateway[] = [];
try {
  const plain = await startGateway(localGatewayConfig({ endpoints, redisPort: redis.port, plugin: null, workers: 2, adminPort: null, logLevel: "warn" }));
  const glr = await startGateway(localGatewayConfig({ endpoints, redisPort: redis.port, workers: 2, adminPort: null, logLevel: "warn",
    plugin: { lb_policy: "global_least_request", lb_config: redisLbConfig(redis.port) } }));
  gateways.push(plain, glr);
  const body = JSON.stringify({ model: "sim-tiny", messages: [{ role: "system", content: "be brief ".repeat(40) }, { role: "user", content: "hi" }], max_tokens: 1 });
  const base: number[] = [];
  const total: number[] = [];
  const wasm: number[] = [];
  const rtt: number[] = [];
  const calls: number[] = [];
  const imports: number[] = [];
  for (let i = 0; i < requests + 50; i++) {
    const b = await post(plain.url, body);
    if (i === 50) perCallback.clear();
    if (i === 50) { perImport.clear(); importCalls.clear(); }
    inWasm = 0; inRedis = 0; callbacks = 0; inImports = 0;
    const t = await post(glr.url, body);
    // Ticks and stats flushes between requests are not this request's: only count while it ran.
    if (i >= 50) { base.push(b); total.push(t); wasm.push(inWasm); rtt.push(inRedis); calls.push(callbacks); imports.push(inImports); }
  }
  const rest = total.map((t, i) => t - base[i] - wasm[i] - rtt[i]);
  const f = (x: number) => x.toFixed(3);
  console.log(`| per request (${requests}, interleaved) | p50 ms | p90 ms |`);
  console.log("|---|---|---|");
  console.log(`| no plugin: client round trip | ${f(pct(base, 0.5))} | ${f(pct(base, 0.9))} |`);
  console.log(`| global_least_request: client round trip | ${f(pct(total, 0.5))} | ${f(pct(total, 0.9))} |`);
  console.log(`| added (p50 of the difference per pair) | ${f(pct(total.map((t, i) => t - base[i]), 0.5))} | ${f(pct(total.map((t, i) => t - base[i]), 0.9))} |`);
  console.log(`| of which the Redis round trip (the acquire, one call) | ${f(pct(rtt, 0.5))} | ${f(pct(rtt, 0.9))} |`);
  // Issue 14's goal, per pair: what the plugin adds beyond its one Redis round trip.
  const beyond = total.map((t, i) => t - base[i] - rtt[i]);
  console.log(`| **added beyond that round trip** (p50 of added - round trip, per pair) | ${f(pct(beyond, 0.5))} | ${f(pct(beyond, 0.9))} |`);
  console.log(`| of which inside the plugin's callbacks (Wasm + host imports), ${pct(calls, 0.5)} callbacks | ${f(pct(wasm, 0.5))} | ${f(pct(wasm, 0.9))} |`);
  console.log(`| of those: in host imports called by the plugin | ${f(pct(imports, 0.5))} | ${f(pct(imports, 0.9))} |`);
  console.log(`| of those: the plugin's own Wasm code | ${f(pct(wasm.map((w, i) => w - imports[i]), 0.5))} | ${f(pct(wasm.map((w, i) => w - imports[i]), 0.9))} |`);
  console.log(`| the rest: Node host work and event-loop turns | ${f(pct(rest, 0.5))} | ${f(pct(rest, 0.9))} |`);
  console.log("\n| host import | calls per request | ms per request (mean) |\n|---|---|---|");
  for (const [name, t] of [...perImport].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
    console.log(`| ${name} | ${((importCalls.get(name) ?? 0) / requests).toFixed(2)} | ${f(t / requests)} |`);
  }
  console.log("\n| callback (outermost) | calls per request | p50 ms | p90 ms | total ms per request |\n|---|---|---|---|---|");
  for (const [name, xs] of [...perCallback].sort((a, b) => b[1].reduce((x, y) => x + y, 0) - a[1].reduce((x, y) => x + y, 0))) {
    console.log(`| ${name} | ${(xs.length / requests).toFixed(2)} | ${f(pct(xs, 0.5))} | ${f(pct(xs, 0.9))} | ${f(xs.reduce((x, y) => x + y, 0) / requests)} |`);
  }
} finally {
  for (const g of gateways) await g.close();
  await fleet.close();
  await redis.stop();
  agent.destroy();
}
