// Runs one load scenario in VIRTUAL time: per policy a fresh event clock, virtual fleet, Redis
// (a real redis-server, fresh per policy like the wall-clock path) and gateways running the real
// release .wasm on the ABI core; then the same summaries and report as bench/run-scenario.ts.
// One seed -> one result: the workload, arrivals, engines' jitter, the gateways' LB and the
// plugin's randomness are seeded, and Redis runs the calls in event order (bench/virtual/).
// Times are simulated ms; the wall clock only bounds nothing and is reported as cost.
// Failure behaviour: a policy whose parts cannot start is reported as skipped, as in wall mode.
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startRedis, type RedisFixture } from "../../host-test/redis-server.js";
import { WASM_PATH } from "../gateway-config.js";
import { openLoopTimes, type LoadSpec } from "../loadgen.js";
import { summarize, summarizeByTag } from "../metrics.js";
import { createVirtualPicker } from "../pickers.js";
import { POLICIES, type PolicyName } from "../policies.js";
import { progressPrinter } from "../progress.js";
import type { PolicyRun, ScenarioReport } from "../report.js";
import type { RunOverrides } from "../run-scenario.js";
import type { LoadScenario } from "../scenarios/types.js";
import { REPO_ROOT } from "../topology.js";
import { totalTurns } from "../workloads/types.js";
import { EventClock } from "./event-clock.js";
import { runEvents } from "./event-loop.js";
import { VirtualRedisLink } from "./redis-link.js";
import { VirtualFleet } from "./virtual-fleet.js";
import { VirtualGateway } from "./virtual-gateway.js";
import { startVirtualLoad, type VirtualFront } from "./virtual-loadgen.js";
import { VirtualLua } from "./virtual-lua.js";
import { VirtualPickerFront } from "./virtual-picker.js";

/** Virtual ms between a Redis call and its reply (loopback + the host's own work, measured: bench RESULTS §6). */
export const DEFAULT_REDIS_RTT_MS = 0.5;
const DEFAULT_DRAIN_WALL_MS = 30_000;

export interface VirtualOverrides extends RunOverrides {
  redisRttMs?: number;
  /** Replaces the scenario's load (capacity sweeps run one constant rate at a time). */
  load?: LoadSpec;
  /** Virtual ms in-flight requests get after the last send (default: 30 wall s x time scale). */
  drainMs?: number;
}

interface Parts { front: VirtualFront; link: VirtualRedisLink | null; close(): Promise<void> }

async function startParts(scenario: LoadScenario, policyName: PolicyName, clock: EventClock, fleet: VirtualFleet, seed: number, o: VirtualOverrides, wasm: Uint8Array): Promise<Parts> {
  const policy = POLICIES[policyName];
  const gatewayCount = o.gateways ?? scenario.topology.gateways;
  if (policy.kind === "proxy") {
    const front = new VirtualPickerFront(clock, fleet, createVirtualPicker(policy, fleet));
    return { front: { count: 1, send: (_i, req, done) => front.send(req, done), abortAll: () => front.abortAll() }, link: null, close: async () => {} };
  }
  let redis: RedisFixture | null = null;
  let link: VirtualRedisLink | null = null;
  const gateways: VirtualGateway[] = [];
  const close = async () => {
    for (const g of gateways) g.close();
    link?.close();
    if (redis?.owned) await redis.stop();
  };
  try {
    if (policy.needsRedis) {
      redis = await startRedis();
      if (!redis.owned) throw new Error("benchmarks need their own redis-server (unset REDIS_URL): Redis is flushed per run");
      link = new VirtualRedisLink(clock, new VirtualLua(), redis.port, o.redisRttMs ?? DEFAULT_REDIS_RTT_MS);
    }
    const base = policy.plugin && redis ? policy.plugin(redis.port) : null;
    const pluginConfig = base && o.lbConfig ? { ...base, lb_config: { ...(base.lb_config as Record<string, unknown>), ...o.lbConfig } } : base;
    for (let i = 0; i < gatewayCount; i++) {
      gateways.push(await VirtualGateway.create({
        index: i, clock, fleet, redis: link, clusterLb: policy.clusterLb, pluginConfig, wasm,
        workers: scenario.topology.workers ?? 1, seed,
      }));
    }
  } catch (e) {
    await close();
    throw e;
  }
  return {
    front: { count: gateways.length, send: (i, req, done) => gateways[i].send(req, done), abortAll: () => { for (const g of gateways) g.abortAll(); } },
    link,
    close,
  };
}

export async function runVirtualScenario(scenario: LoadScenario, o: VirtualOverrides = {}): Promise<ScenarioReport> {
  const seed = o.seed ?? 1;
  const timeScale = o.timeScale ?? scenario.topology.timeScale;
  const topology = { ...scenario.topology, seed, timeScale, ...(o.gateways ? { gateways: o.gateways } : {}) };
  const baseLoad = o.load ?? scenario.load;
  const load = baseLoad.mode === "concurrency" && o.concurrency !== undefined ? { ...baseLoad, concurrency: o.concurrency } : baseLoad;
  const workload = scenario.workload(seed);
  const arrivals = load.mode === "concurrency" ? Infinity : openLoopTimes(load, seed).length;
  const expected = Math.min(scenario.maxRequests ?? Infinity, totalTurns(workload), arrivals);
  const redisRttMs = o.redisRttMs ?? DEFAULT_REDIS_RTT_MS;
  const wasm = new Uint8Array(fs.readFileSync(path.join(REPO_ROOT, WASM_PATH)));
  const report: ScenarioReport = {
    scenario: scenario.name,
    description: scenario.description,
    startedAt: new Date().toISOString(),
    parameters: { ...scenario.parameters, mode: "virtual", redisRttMs, seed, topology, load, sessions: workload.sessions.length, turns: totalTurns(workload) },
    slo: scenario.slo ?? null,
    runs: [],
    notes: [...(scenario.notes ?? []), "virtual time: one discrete-event clock drives the plugin, Redis scripts, engines and clients; reproducible from the seed"],
  };
  for (const policy of o.policies ?? scenario.policies) {
    const run: PolicyRun = { policy, description: POLICIES[policy].description + (o.lbConfig ? ` + lb_config ${JSON.stringify(o.lbConfig)}` : "") };
    report.runs.push(run);
    const clock = new EventClock();
    const healthChecks = POLICIES[policy].kind === "gateway" && (POLICIES[policy] as { metricsHealthCheck: boolean }).metricsHealthCheck;
    const fleet = new VirtualFleet(clock, {
      pods: topology.pods, profile: topology.profile, profileOverrides: topology.profileOverrides, seed,
      // The wall path checks every metricsIntervalMs WALL ms: the same simulated staleness here.
      metricsIntervalMs: healthChecks ? (topology.metricsIntervalMs ?? 100) * timeScale : 0,
    });
    let parts: Parts;
    try {
      parts = await startParts(scenario, policy, clock, fleet, seed, o, wasm);
    } catch (e) {
      fleet.close();
      run.skipped = (e as Error).message.split("\n")[0];
      if (!o.quiet) process.stderr.write(`${scenario.name}/${policy}: skipped: ${run.skipped}\n`);
      continue;
    }
    const progress = o.quiet ? null : progressPrinter(`${scenario.name}/${policy} (virtual)`, expected);
    const wallStart = performance.now();
    try {
      const vload = startVirtualLoad({
        clock, front: parts.front, workload, load, seed, spread: scenario.spread, maxRequests: scenario.maxRequests,
        maxMs: scenario.maxWallMs * timeScale, drainMs: o.drainMs ?? DEFAULT_DRAIN_WALL_MS * timeScale,
      });
      let lastPrint = 0;
      await runEvents(clock, parts.link, () => vload.done, () => {
        const now = performance.now();
        if (progress && now - lastPrint > 1000) { lastPrint = now; progress.update(vload.progress); }
      });
      const result = vload.result(performance.now() - wallStart);
      run.summary = summarize(result.records, result.durationMs, scenario.slo ?? null, fleet.pods.map((p) => p.name));
      const byTag = summarizeByTag(result.records, result.durationMs, scenario.slo ?? null);
      if (Object.keys(byTag).length > 0) run.byTag = byTag;
      const { records: _records, ...loadgen } = result;
      run.loadgen = { ...loadgen, events: clock.eventsRun, redisCalls: parts.link?.calls ?? 0 };
    } finally {
      progress?.done();
      fleet.close();
      await parts.close();
    }
  }
  return report;
}
