// Micro-benchmarks with their own main: `lua-pick` (acquire.lua vs a per-host HASH scan, real
// redis-server; bench/lua-pick.ts), `hash-cost` / `parse-cost` (the plugin's pure code timed inside
// Wasm; bench/micro/costs.ts) and `plugin-latency` (latency the plugin adds through the gateway;
// bench/micro/plugin-latency.ts). Loaded lazily: the compiler and Redis start only when asked.
import type { CustomScenario } from "./types.js";

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!(Number.isInteger(n) && n > 0)) throw new Error(`${name}: expected a positive integer, got ${raw}`);
  return n;
}

export const luaPick: CustomScenario = {
  kind: "custom",
  name: "lua-pick",
  description: "acquire.lua vs a per-host HASH scan at 10 / 100 / 1000 hosts (args: [acquires per size, default 2000]).",
  async run(args) {
    const { printLuaPickTable, runLuaPickBench } = await import("../lua-pick.js");
    printLuaPickTable(await runLuaPickBench(positiveInt("lua-pick", args[0], 2000)));
  },
};

function costScenario(name: "hash-cost" | "parse-cost", what: string): CustomScenario {
  return {
    kind: "custom",
    name,
    description: what,
    async run(args) {
      const { baselineArg, costTable, runCosts } = await import("../micro/costs.js");
      console.log(costTable(await runCosts(name, baselineArg(args))));
    },
  };
}

export const hashCost = costScenario("hash-cost", "prefix hashing cost per request body inside Wasm (1 / 4 / 16 / 128 KB chats; args: [--baseline <git ref>]).");
export const parseCost = costScenario("parse-cost", "request JSON and /metrics parsing cost inside Wasm (args: [--baseline <git ref>]).");

export const pluginLatency: CustomScenario = {
  kind: "custom",
  name: "plugin-latency",
  description: "latency the plugin adds per request through the gateway, plugin on vs off (args: [requests, default 600]).",
  async run(args) {
    const { latencyTable, runPluginLatency, flushTable, runRedisFlush } = await import("../micro/plugin-latency.js");
    const n = positiveInt("plugin-latency", args[0], 600);
    console.log(latencyTable(await runPluginLatency(n)));
    console.log(flushTable(await runRedisFlush(n)));
  },
};

export const soakMemory: CustomScenario = {
  kind: "custom",
  name: "soak-memory",
  description: "1,000,000 requests through the facade, every policy, mixed bodies/aborts/Redis errors: Wasm pages, heap, pick cost at 10k/100k/1M (args: [requests]).",
  async run(args) {
    const { runSoakMemory, soakTable } = await import("../micro/soak-memory.js");
    console.log(soakTable(await runSoakMemory(positiveInt("soak-memory", args[0], 1_000_000))));
  },
};

export const holdPass: CustomScenario = {
  kind: "custom",
  name: "hold-pass",
  description: "late binding under an overload: µs of a tick pass and of a stream end with H requests held on P full one-slot pods, over W worker VMs of one Envoy (args: [pods=64] [held=512] [wasm] [workers=1]).",
  async run(args) {
    const { runHoldPass } = await import("../micro/hold-pass.js");
    const pods = positiveInt("hold-pass", args[0], 64);
    const held = positiveInt("hold-pass", args[1], 512);
    const workers = positiveInt("hold-pass", args[3], 1);
    const r = await runHoldPass(pods, held, args[2] ?? "build/ai-load-balancer.wasm", workers);
    console.log(`| pods | held | workers | tick pass µs (median of 50) | stream end µs (median of 50) |\n|---|---|---|---|---|\n| ${pods} | ${r.held} | ${workers} | ${r.tick.toFixed(0)} | ${r.streamEnd.toFixed(0)} |`);
  },
};

export const shareCost: CustomScenario = {
  kind: "custom",
  name: "share-cost",
  description: "predicted_latency's worker records (sloShareWorkers) at scale: µs per pick and per stream end, CPU per request, W workers of one Envoy with N streams open on P pods of S slots, sharing on and off in one run (args: [workers=8] [pods=16] [slots=64] [open=800] [wasm]).",
  async run(args) {
    const { runShareCost, shareCostRow, SHARE_COST_HEADER } = await import("../micro/share-cost.js");
    const [workers, pods, slots, open] = [positiveInt("share-cost", args[0], 8), positiveInt("share-cost", args[1], 16),
      positiveInt("share-cost", args[2], 64), positiveInt("share-cost", args[3], 800)];
    const wasm = args[4] ?? "build/ai-load-balancer.wasm";
    // A first run, not reported: V8 tiers the module's code up while it runs (later loads of the
    // same bytes reuse the optimized code), so the first configuration measured would pay for it.
    await runShareCost(workers, pods, slots, Math.min(open, 100), true, wasm);
    console.log(SHARE_COST_HEADER);
    for (const share of [true, false]) console.log(shareCostRow(workers, pods, slots, open, share, await runShareCost(workers, pods, slots, open, share, wasm)));
  },
};

export const requestCost: CustomScenario = {
  kind: "custom",
  name: "request-cost",
  description: "the plugin's CPU per request through its real exports at gateway scale (P pods, B KiB chat bodies, O streams open), several builds interleaved in one run (args: [--wasm a,b] [--pods 256] [--kb 1,100] [--open 512] [--requests 200] [--policies ...]).",
  async run(args) {
    const { requestCostMain } = await import("../micro/request-cost.js");
    await requestCostMain(args);
  },
};

export const calibrate: CustomScenario = {
  kind: "custom",
  name: "calibrate",
  description: "The simulator's profiles measured like published vLLM numbers (decode ms/token by batch, prefill, peak tok/s), with sources and errors.",
  async run() {
    const { calibrationTable } = await import("../calibrate.js");
    console.log(calibrationTable());
  },
};

export const redisOutage: CustomScenario = {
  kind: "custom",
  name: "redis-outage",
  description: "Redis frozen (SIGSTOP) and killed+restarted under steady load through 2 gateways: failures, added p99, time back on Redis, time to exact counts (args: [--outage S=30] [--rate R=75] [--lease-ttl S=2] [--json FILE]).",
  async run(args) {
    const { main } = await import("../redis-outage.js");
    await main(args);
  },
};
