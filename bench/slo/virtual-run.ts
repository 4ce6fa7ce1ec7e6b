// Runs a list of timed requests (SLO / tenant headers of their own) through N gateways in VIRTUAL
// time (bench/virtual/): one event clock, the virtual fleet (some pods slowed down), a fresh real
// redis-server, the real release .wasm; or, for a proxy policy (bench/policies.ts), through its
// central picker (no gateway, no Redis); returns what each client saw. A run is a pure function
// of its inputs (seeded fleet, gateways and jobs; Redis runs calls in event order).
// Bounds: after the last job, `drainMs` of virtual time, then the clients still waiting abort.
// Failure behaviour: a refused plugin configuration or a missing redis-server throws.
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startRedis } from "../../host-test/redis-server.js";
import type { SimProfile } from "../../host-test/sim/profiles.js";
import { chatToPrompt, tokenize } from "../../host-test/sim/tokenizer.js";
import { WASM_PATH } from "../gateway-config.js";
import { createVirtualPicker } from "../pickers.js";
import { POLICIES, type PolicyName } from "../policies.js";
import { REPO_ROOT } from "../topology.js";
import { EventClock } from "../virtual/event-clock.js";
import { runEvents } from "../virtual/event-loop.js";
import { VirtualRedisLink } from "../virtual/redis-link.js";
import { VirtualFleet } from "../virtual/virtual-fleet.js";
import { VirtualGateway, type VirtualOutcome } from "../virtual/virtual-gateway.js";
import { VirtualLua } from "../virtual/virtual-lua.js";
import { VirtualPickerFront } from "../virtual/virtual-picker.js";
import { ReplicaSharedData } from "../virtual/replica-shared-data.js";
import { DEFAULT_REDIS_RTT_MS } from "../virtual/run-virtual.js";

export interface SloJob {
  /** Virtual ms of the send. */
  at: number;
  prompt: string;
  maxTokens: number;
  headers: Array<[string, string]>;
}

export interface SloFleet {
  pods: number;
  profile: string;
  profileOverrides?: Partial<SimProfile>;
  /** Indexes of pods running `slowFactor` times slower. */
  slowPods?: number[];
  slowFactor?: number;
}

export interface SloRunOptions {
  policy: PolicyName;
  /** Merged into the policy's lb_config. */
  lbConfig?: Record<string, unknown>;
  fleet: SloFleet;
  jobs: SloJob[];
  seed: number;
  gateways?: number;
  /** Worker VMs per gateway (one Envoy's worker threads: they share its shared data). */
  workers?: number;
  /** A what-if: the gateways share one shared data, each seeing the others' writes this many ms
   *  late (replica-shared-data.ts); undefined: each its own, as Envoys' are. */
  replicaShareMs?: number;
  drainMs?: number;
  /** Response bodies to the plugin one chunk per token (default true: as Envoy streams them); false: first token, then the rest at the end. */
  tokenChunks?: boolean;
}

export interface SloRun {
  outcomes: VirtualOutcome[];
  /** Start of each job (virtual ms), the outcome's times are on the same clock. */
  starts: number[];
  wallMs: number;
  events: number;
  /** Requests predicted_latency sent past the lowest-TTFT pod for less prefill harm, all gateways. */
  interferenceAvoided: number;
  /** Requests predicted_latency held for other streams' TPOT (sloInterferenceHold), all gateways. */
  interferenceHeld: number;
  /** The plugin's Redis calls in the run, and their bytes each way (null: no Redis). */
  redisTraffic: RedisTraffic | null;
}

export interface RedisTraffic { calls: number; sent: number; received: number }

let wasmCache: Uint8Array | null = null;

export async function runSloJobs(o: SloRunOptions): Promise<SloRun> {
  const policy = POLICIES[o.policy];
  const clock = new EventClock();
  const fleet = new VirtualFleet(clock, {
    pods: o.fleet.pods, profile: o.fleet.profile, profileOverrides: o.fleet.profileOverrides, seed: o.seed,
    metricsIntervalMs: policy.kind === "gateway" && policy.metricsHealthCheck ? 100 : 0,
  });
  for (const i of o.fleet.slowPods ?? []) fleet.pods[i].engine.slowFactor = o.fleet.slowFactor ?? 2;
  const redis = policy.kind === "gateway" && policy.needsRedis ? await startRedis() : null;
  const link = redis ? new VirtualRedisLink(clock, new VirtualLua(), redis.port, DEFAULT_REDIS_RTT_MS) : null;
  const gateways: Array<Pick<VirtualGateway, "send" | "abortAll"> & { close?(): void; counter?(name: string): number }> = [];
  try {
    if (policy.kind === "proxy") {
      gateways.push(new VirtualPickerFront(clock, fleet, createVirtualPicker(policy, fleet)));
    } else {
      wasmCache ??= new Uint8Array(fs.readFileSync(path.join(REPO_ROOT, WASM_PATH)));
      const base = policy.plugin && redis ? policy.plugin(redis.port) : null;
      const pluginConfig = base && o.lbConfig ? { ...base, lb_config: { ...(base.lb_config as Record<string, unknown>), ...o.lbConfig } } : base;
      const across = o.replicaShareMs === undefined ? null : new ReplicaSharedData(() => clock.now(), o.replicaShareMs);
      for (let g = 0; g < (o.gateways ?? 1); g++) {
        gateways.push(await VirtualGateway.create({ index: g, clock, fleet, redis: link, clusterLb: policy.clusterLb, pluginConfig, wasm: wasmCache, workers: o.workers ?? 1, seed: o.seed, tokenChunks: o.tokenChunks ?? true, sharedData: across?.view(g) }));
      }
    }
    const outcomes = new Array<VirtualOutcome>(o.jobs.length);
    const starts = o.jobs.map((j) => j.at);
    let left = o.jobs.length;
    o.jobs.forEach((j, i) => {
      clock.at(j.at, () => {
        const body = { model: fleet.profile.modelName, messages: [{ role: "user", content: j.prompt }], max_tokens: j.maxTokens, ignore_eos: true, stream: true };
        const req = {
          id: `req-${i}`, body: Buffer.from(JSON.stringify(body)), bodyObject: body,
          promptTokens: tokenize(chatToPrompt(body.messages)), maxTokens: j.maxTokens, headers: j.headers,
        };
        gateways[i % gateways.length].send(req, (out) => { outcomes[i] = out; left--; });
      });
    });
    const last = o.jobs.reduce((m, j) => Math.max(m, j.at), 0);
    clock.at(last + (o.drainMs ?? 120_000), () => { for (const g of gateways) g.abortAll(); });
    const wall = performance.now();
    await runEvents(clock, link, () => left === 0);
    const total = (name: string) => gateways.reduce((a, g) => a + (g.counter?.(name) ?? 0), 0);
    const interferenceAvoided = total("llmlb_slo_interference_avoided_total");
    const interferenceHeld = total("llmlb_slo_interference_held_total");
    const redisTraffic = link ? { calls: link.calls, sent: link.bytesSent, received: link.bytesReceived } : null;
    return { outcomes, starts, wallMs: performance.now() - wall, events: clock.eventsRun, interferenceAvoided, interferenceHeld, redisTraffic };
  } finally {
    for (const g of gateways) g.close?.();
    link?.close();
    fleet.close();
    if (redis?.owned) await redis.stop();
  }
}

/** TTFT and TPOT (ms) a client saw; null when no token came. */
export function clientTimes(o: VirtualOutcome, startMs: number): { ttft: number | null; tpot: number | null } {
  if (o.firstTokenMs === null) return { ttft: null, tpot: null };
  const n = o.tokenMs.length;
  return { ttft: o.firstTokenMs - startMs, tpot: n > 1 ? (o.tokenMs[n - 1] - o.tokenMs[0]) / (n - 1) : null };
}

/**
 * Saturated throughput of a fleet: the jobs (offered far above capacity) through
 * global_least_request (a work-conserving spread); requests completed per second in [fromMs, toMs]
 * (the fleet must be saturated throughout: the window ends at the last arrival).
 */
export async function saturatedThroughput(fleet: SloFleet, jobs: SloJob[], seed: number, fromMs: number, toMs: number): Promise<number> {
  const run = await runSloJobs({ policy: "global_least_request", seed, fleet, jobs, drainMs: 0 });
  const done = run.outcomes.filter((o) => o.status === 200 && o.error === null && o.endMs > fromMs && o.endMs <= toMs).length;
  return done / ((toMs - fromMs) / 1000);
}
