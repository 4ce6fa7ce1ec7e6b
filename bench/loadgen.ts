// The load generator: sends a workload's turns to gateway URLs, open loop (Poisson / constant
// arrivals in stages) or closed loop (fixed concurrency), and records one RequestRecord per sent
// turn. Multi-turn sessions wait for the previous turn (TurnQueue); sessions are spread over the
// gateways like an L4 balancer (GatewaySpreader). Bounded: stops issuing at maxRequests or
// maxWallMs, then waits at most drainWallMs for in-flight requests and aborts the rest.
// TIME: records are in SIMULATED ms (wall ms x timeScale), comparable with the simulator's numbers.
// Failure behaviour: request failures are records (ok: false), never exceptions; throws only on
// invalid options.
import { setMaxListeners } from "node:events";
import http from "node:http";
import { performance } from "node:perf_hooks";
import { SeededRandom } from "../host-test/sim/random.js";
import { arrivalTimes, type ArrivalProcess, type Stage } from "./arrivals.js";
import { GatewaySpreader, type SpreadMode } from "./spreader.js";
import { streamRequest, type StreamOutcome } from "./stream-request.js";
import { TurnQueue, type SessionState } from "./turn-queue.js";
import { chatCompletionBody, conversationMessages } from "./workloads/chat-request.js";
import type { Workload } from "./workloads/types.js";

export type LoadSpec =
  | { mode: "stages"; arrivals: ArrivalProcess; stages: Stage[] }
  | { mode: "trace"; timesMs: number[] }
  | { mode: "concurrency"; concurrency: number };

/** Open-loop send times (simulated ms) of a load: the seeded stages' arrivals, or a trace's own. */
export function openLoopTimes(load: Exclude<LoadSpec, { mode: "concurrency" }>, seed: number): number[] {
  return load.mode === "trace" ? load.timesMs : arrivalTimes(load.stages, load.arrivals, new SeededRandom(seed));
}

export interface LoadgenOptions {
  urls: string[];
  workload: Workload;
  load: LoadSpec;
  /** Simulated ms per wall ms (the simulator's timeScale). */
  timeScale: number;
  seed: number;
  spread?: SpreadMode;
  model?: string;
  path?: string;
  maxRequests?: number;
  maxWallMs: number;
  drainWallMs?: number;
  requestTimeoutWallMs?: number;
  onProgress?(progress: LoadProgress): void;
}

export interface LoadProgress { sent: number; done: number; failed: number; inFlight: number; elapsedWallMs: number }

export interface RequestRecord {
  session: string;
  turn: number;
  group: number;
  tag?: string;
  gateway: number;
  pod: string | null;
  status: number;
  ok: boolean;
  error: string | null;
  /** Simulated ms since the run started. */
  startMs: number;
  /** Time to first token, null when no token arrived. */
  ttftMs: number | null;
  e2eMs: number;
  /** Gaps between content chunks. */
  itlMs: number[];
  outputTokens: number;
  promptTokens: number;
  cachedTokens: number;
}

export interface LoadgenResult {
  records: RequestRecord[];
  /** Simulated ms from the first send to the last completion. */
  durationMs: number;
  wallMs: number;
  stoppedBy: "workload" | "arrivals" | "maxRequests" | "maxWallMs";
  /** Turns never sent: cut by a bound, or abandoned after a failed turn of their session. */
  unsentTurns: number;
  /** Open loop: arrivals that found no ready turn and waited for one (multi-turn back-pressure). */
  deferredArrivals: number;
}

const DEFAULT_DRAIN_WALL_MS = 30_000;
const DEFAULT_REQUEST_TIMEOUT_WALL_MS = 120_000;
const PROGRESS_EVERY_MS = 1000;

function toRecord(s: SessionState, turn: number, o: StreamOutcome, originWall: number, scale: number): RequestRecord {
  const walls = o.contentWalls;
  const itl: number[] = [];
  for (let i = 1; i < walls.length; i++) itl.push((walls[i] - walls[i - 1]) * scale);
  return {
    session: s.session.id,
    turn,
    group: s.session.group,
    tag: s.session.tag,
    gateway: s.gateway,
    pod: o.pod,
    status: o.status,
    ok: o.error === null,
    error: o.error,
    startMs: (o.startWall - originWall) * scale,
    ttftMs: walls.length > 0 ? (walls[0] - o.startWall) * scale : null,
    e2eMs: (o.endWall - o.startWall) * scale,
    itlMs: itl,
    outputTokens: o.usage?.completionTokens ?? walls.length,
    promptTokens: o.usage?.promptTokens ?? 0,
    cachedTokens: o.usage?.cachedTokens ?? 0,
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

export async function runLoad(opts: LoadgenOptions): Promise<LoadgenResult> {
  if (opts.urls.length === 0) throw new Error("loadgen: no gateway URLs");
  if (!(opts.timeScale > 0)) throw new Error(`loadgen: timeScale must be > 0, got ${opts.timeScale}`);
  const scale = opts.timeScale;
  const path = opts.path ?? "/v1/chat/completions";
  const agents = opts.urls.map(() => new http.Agent({ keepAlive: true, maxSockets: Infinity }));
  const spreader = new GatewaySpreader(opts.urls.length, opts.spread ?? "round_robin", opts.seed ^ 0x2545f491);
  const queue = new TurnQueue(opts.workload);
  const abort = new AbortController();
  setMaxListeners(0, abort.signal); // one listener per in-flight request
  const records: RequestRecord[] = [];
  const inFlight = new Set<Promise<void>>();
  const origin = performance.now();
  const maxRequests = opts.maxRequests ?? Infinity;
  let sent = 0;
  let failed = 0;
  let stoppedBy: LoadgenResult["stoppedBy"] = "workload";
  let deferredArrivals = 0;

  const elapsed = () => performance.now() - origin;
  const bounded = (): boolean => {
    if (sent >= maxRequests) stoppedBy = "maxRequests";
    else if (elapsed() >= opts.maxWallMs) stoppedBy = "maxWallMs";
    else return false;
    return true;
  };
  const progress = () => opts.onProgress?.({ sent, done: records.length, failed, inFlight: inFlight.size, elapsedWallMs: elapsed() });
  const ticker = setInterval(progress, PROGRESS_EVERY_MS);

  const send = (s: SessionState): Promise<void> => {
    if (s.gateway < 0) s.gateway = spreader.assign();
    const turn = s.nextTurn;
    const body = chatCompletionBody(conversationMessages(s.session, turn, s.replies), s.session.turns[turn].outputTokens, opts.model);
    sent++;
    const p = streamRequest(opts.urls[s.gateway] + path, body, agents[s.gateway], opts.requestTimeoutWallMs ?? DEFAULT_REQUEST_TIMEOUT_WALL_MS, abort.signal)
      .then((o) => {
        const record = toRecord(s, turn, o, origin, scale);
        records.push(record);
        if (!record.ok) failed++;
        queue.complete(s, record.ok, o.content);
      });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    return p;
  };

  try {
    if (opts.load.mode === "concurrency") {
      const worker = async () => {
        while (!bounded()) {
          const s = await queue.take();
          if (!s) return;
          await send(s);
        }
      };
      await Promise.all(Array.from({ length: opts.load.concurrency }, worker));
      if (stoppedBy !== "workload") queue.stop();
    } else {
      stoppedBy = "arrivals";
      const times = openLoopTimes(opts.load, opts.seed);
      for (const simMs of times) {
        await sleep(simMs / scale - elapsed());
        if (bounded()) break;
        let s = queue.tryTake();
        if (!s) {
          deferredArrivals++;
          s = await queue.take();
          if (!s) { stoppedBy = "workload"; break; }
        }
        void send(s);
      }
      queue.stop();
    }
    const drained = Promise.all([...inFlight]).then(() => true);
    const inTime = await Promise.race([drained, sleep(opts.drainWallMs ?? DEFAULT_DRAIN_WALL_MS).then(() => false)]);
    if (!inTime) abort.abort();
    await Promise.all([...inFlight]);
  } finally {
    clearInterval(ticker);
    for (const a of agents) a.destroy();
  }
  progress();
  // Loops, not Math.min(...spread): a spread of 100k+ records overflows the call stack.
  let first = Infinity;
  let last = 0;
  for (const r of records) {
    first = Math.min(first, r.startMs);
    last = Math.max(last, r.startMs + r.e2eMs);
  }
  return {
    records,
    durationMs: records.length > 0 ? last - first : 0,
    wallMs: elapsed(),
    stoppedBy,
    unsentTurns: queue.remainingTurns() + queue.abandonedTurns,
    deferredArrivals,
  };
}
