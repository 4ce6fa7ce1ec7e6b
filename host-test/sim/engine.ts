// Continuous-batching engine of one simulated vLLM server (V1 scheduler shape).
//
// Each step: every running request that is decoding gets one token; the rest of the token
// budget (maxNumBatchedTokens) goes to prefill chunks, first of running requests still
// prefilling, then of waiting requests admitted FCFS (at most maxNumSeqs running). Admission
// reuses the longest cached block chain (capped at tokens - 1). When blocks run out, the most
// recently scheduled running request is preempted: blocks freed, back to the head of the queue,
// recomputed later (mostly from cache). Tokens appear at the END of the step that computes them.
// Step time = (stepBaseMs + prefillMsPerToken * prefill_tokens + decodeMsPerSeq * decode_seqs)
//   * jitter (seeded) * slowFactor.
//
// TIME: every timestamp and latency here (events, RequestResult, /metrics histograms) is in
// SIMULATED milliseconds. The engine is a discrete-event simulation: a cursor advances by step
// durations; a request takes part in the first step starting at or after its readyAtMs (arrival
// + API overhead). In "realtime" mode the cursor is paced by the wall clock (one wall ms =
// `timeScale` simulated ms): a step is planned once the wall reaches its start and its tokens
// are delivered when the wall reaches its end. A late timer (busy CPU) delays delivery but does
// not stretch simulated latencies: late steps run back to back until the cursor catches up.
// Only the arrival stamp (taken by the caller from now()) sees event-loop lag. A load generator
// measuring wall time multiplies by timeScale; one reading the usage/metrics gets simulated
// values directly. In "manual" mode nothing runs by itself: step()/runVirtual() advance the
// cursor, jumping over idle time to the next readyAtMs, for deterministic tests. In "virtual"
// mode the same loop as realtime runs on an injected discrete-event clock (`clock`): steps start
// and end at exact simulated instants and nothing depends on the wall (benchmarks' virtual time).
//
// Failure behaviour: never throws on the request path; a request that can never fit is the
// server's job to refuse (maxModelLen <= pool size, see profiles.ts).
import { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";
import { hashTokens } from "./hash.js";
import { chainRoot, extendBlockHashes, KvBlockPool } from "./kv.js";
import type { SimProfile } from "./profiles.js";
import { SeededRandom } from "./random.js";
import { SimRequest, type RequestResult } from "./request.js";
import { EngineStats } from "./stats.js";

/** A discrete-event clock in simulated ms (virtual mode): the engine's only source of time. */
export interface SimClock {
  now(): number;
  /** Runs `fn` after `delayMs` simulated ms (0: after what is already due now); returns a canceller. */
  after(delayMs: number, fn: () => void): () => void;
  /** Unix ms of simulated time 0 (for wall-time labels such as vllm:lora_requests_info). */
  readonly epochMs: number;
}

export interface EngineOptions {
  profile: SimProfile;
  mode?: "realtime" | "manual" | "virtual";
  /** Required in virtual mode. */
  clock?: SimClock;
  /** Simulated ms per wall ms in realtime mode (default 1). */
  timeScale?: number;
  seed?: number;
  /** Max distinct LoRA adapters in one batch (vLLM --max-loras). */
  maxLoras?: number;
}

export interface SubmitSpec {
  id?: string;
  promptTokens: readonly string[];
  maxTokens: number;
  /** true: generate exactly maxTokens; false: stop at a seeded sampled length <= maxTokens. */
  ignoreEos: boolean;
  lora?: string | null;
  /** Simulated arrival time (defaults to now()); TTFT and E2E are measured from it. */
  arrivalMs?: number;
  /** Simulated API-server overhead before the scheduler sees the request (default 0). */
  apiOverheadMs?: number;
}

export interface StepReport {
  startMs: number;
  durationMs: number;
  prefillTokens: number;
  decodeSeqs: number;
  scheduledRequests: number;
  preempted: number;
}

interface ScheduledWork {
  request: SimRequest;
  numNewTokens: number;
  isDecode: boolean;
}

interface StepPlan extends StepReport {
  work: ScheduledWork[];
}

export interface EngineSnapshot {
  running: number;
  waiting: number;
  kvUsage: number;
  numGpuBlocks: number;
  blockSize: number;
  usedTokens: number;
  prefixQueriedTokens: number;
  prefixHitTokens: number;
  runningLoras: string[];
  waitingLoras: string[];
  maxLoras: number;
  loraInfoChangedAtSec: number;
  stats: EngineStats;
}

export interface EngineEvents {
  requestDone: [RequestResult];
}

export class SimEngine extends EventEmitter<EngineEvents> {
  readonly profile: SimProfile;
  readonly mode: "realtime" | "manual" | "virtual";
  readonly timeScale: number;
  private readonly clock: SimClock | null;
  readonly maxLoras: number;
  readonly pool: KvBlockPool;
  readonly stats = new EngineStats();
  slowFactor = 1;
  private readonly running: SimRequest[] = [];
  private readonly waiting: SimRequest[] = [];
  private rng: SeededRandom;
  private seed: number;
  private nextRequestNumber = 0;
  /** Simulated time at which the next step may start (end of the last step). */
  private cursorMs = 0;
  private readonly wallOrigin = performance.now();
  /** The step planned and not completed yet (realtime/virtual: until its end; a fork: its first step). */
  private inFlight: { plan: StepPlan; endMs: number } | null = null;
  /** Cancels the pending realtime/virtual timer. */
  private timer: (() => void) | null = null;
  private closed = false;
  private loraKey = "";
  private loraChangedAtSec: number;

  constructor(options: EngineOptions) {
    super();
    this.profile = options.profile;
    this.mode = options.mode ?? "realtime";
    this.clock = options.clock ?? null;
    if (this.mode === "virtual" && !this.clock) throw new Error("SimEngine: virtual mode needs a clock");
    this.loraChangedAtSec = this.wallNowMs() / 1000;
    this.timeScale = options.timeScale ?? 1;
    this.seed = options.seed ?? 1;
    this.rng = new SeededRandom(this.seed);
    this.maxLoras = options.maxLoras ?? 4;
    this.pool = new KvBlockPool(this.profile.numGpuBlocks, this.profile.blockSize);
  }

  /** Current simulated time in ms. */
  now(): number {
    if (this.mode === "manual") return this.cursorMs;
    if (this.clock) return this.clock.now();
    return (performance.now() - this.wallOrigin) * this.timeScale;
  }

  /** Unix ms: the wall clock, or the virtual clock's epoch + simulated time. */
  private wallNowMs(): number {
    return this.clock ? this.clock.epochMs + this.clock.now() : Date.now();
  }

  submit(spec: SubmitSpec): SimRequest {
    const lora = spec.lora ?? null;
    const promptSeed = hashTokens(spec.promptTokens, 0, spec.promptTokens.length, this.seed) % 4294967296;
    const arrivalMs = spec.arrivalMs ?? this.now();
    const request = new SimRequest({
      id: spec.id ?? `req-${this.nextRequestNumber++}`,
      promptTokens: spec.promptTokens,
      maxTokens: spec.maxTokens,
      targetOutputTokens: this.pickOutputLength(spec.maxTokens, spec.ignoreEos, promptSeed),
      lora,
      arrivalMs,
      readyAtMs: arrivalMs + (spec.apiOverheadMs ?? 0),
      wordSeed: promptSeed,
    });
    request.onAbort = (r) => this.abortRequest(r);
    this.waiting.push(request);
    this.stats.promptTokens += request.promptLength;
    this.kick();
    return request;
  }

  numRunning(): number {
    return this.running.length;
  }

  numWaiting(): number {
    return this.waiting.length;
  }

  hasWork(): boolean {
    return this.running.length > 0 || this.waiting.length > 0;
  }

  snapshot(): EngineSnapshot {
    this.refreshLoraInfo();
    const usedBlocks = this.pool.numBlocks - this.pool.numFreeBlocks();
    return {
      running: this.running.length,
      waiting: this.waiting.length,
      kvUsage: this.pool.usage(),
      numGpuBlocks: this.pool.numBlocks,
      blockSize: this.pool.blockSize,
      usedTokens: usedBlocks * this.pool.blockSize,
      prefixQueriedTokens: this.pool.queriedTokens,
      prefixHitTokens: this.pool.hitTokens,
      runningLoras: this.lorasOf(this.running),
      waitingLoras: this.lorasOf(this.waiting),
      maxLoras: this.maxLoras,
      loraInfoChangedAtSec: this.loraChangedAtSec,
      stats: this.stats,
    };
  }

  // ---- manual mode -------------------------------------------------------------------------

  /** Runs one step on the virtual clock (a fork: first the step in flight when it was made); null when there is nothing to do. */
  step(): StepReport | null {
    let plan: StepPlan | null;
    let endMs: number;
    if (this.inFlight) {
      ({ plan, endMs } = this.inFlight);
      this.inFlight = null;
    } else {
      plan = this.planNextStep();
      if (!plan) return null;
      endMs = plan.startMs + plan.durationMs;
      this.cursorMs = endMs;
    }
    this.completeStep(plan, endMs);
    const { work: _work, ...report } = plan;
    return report;
  }

  /** Steps until idle (or maxSteps); returns the number of steps run. */
  runVirtual(maxSteps = 1_000_000): number {
    let steps = 0;
    while (steps < maxSteps && this.step()) steps++;
    return steps;
  }

  /** Moves the virtual clock forward (idle time between arrivals). */
  advanceClock(ms: number): void {
    this.cursorMs += ms;
  }

  /** How far (simulated ms) the realtime cursor is behind the wall: > 0 means the host is late. */
  lagMs(): number {
    return this.mode !== "manual" && this.inFlight ? Math.max(0, this.now() - this.cursorMs) : 0;
  }

  /**
   * A manual-mode copy of this engine now: its requests, KV pool, jitter sequence, request
   * numbering and the step in flight (the copy's first step() completes it at its end). Stepping
   * the copy shows exactly what this engine will do if nothing else is submitted to it (the SLO
   * oracle, bench/slo/). Nothing the copy does reaches this engine; the copy reads this engine's
   * prefix cache (KvBlockPool.copyFrom), so use it before this engine changes.
   */
  fork(): SimEngine {
    const copy = new SimEngine({ profile: this.profile, mode: "manual", seed: this.seed, maxLoras: this.maxLoras });
    copy.copyFrom(this);
    return copy;
  }

  /**
   * Makes this manual-mode engine (same profile and maxLoras) a fork of `source` (see fork()),
   * reusing its own KV blocks: a fork costs a pass over the pool instead of allocating one.
   * What it ran before is dropped; its stats are not reset.
   */
  copyFrom(source: SimEngine): void {
    if (this.mode !== "manual" || source.profile !== this.profile || source.maxLoras !== this.maxLoras) {
      throw new Error("SimEngine.copyFrom: a manual engine of the same profile only");
    }
    this.seed = source.seed;
    this.slowFactor = source.slowFactor;
    this.rng = source.rng.clone();
    this.nextRequestNumber = source.nextRequestNumber;
    this.cursorMs = source.cursorMs;
    this.loraKey = source.loraKey;
    this.loraChangedAtSec = source.loraChangedAtSec;
    this.closed = false;
    this.pool.copyFrom(source.pool);
    const copies = new Map<SimRequest, SimRequest>();
    const copyOf = (request: SimRequest): SimRequest => {
      let c = copies.get(request);
      if (!c) {
        c = request.copy((block) => this.pool.blockLike(block));
        c.onAbort = (r) => this.abortRequest(r);
        copies.set(request, c);
      }
      return c;
    };
    this.running.length = 0;
    this.waiting.length = 0;
    for (const r of source.running) this.running.push(copyOf(r));
    for (const r of source.waiting) this.waiting.push(copyOf(r));
    this.inFlight = null;
    if (source.inFlight) {
      const { plan, endMs } = source.inFlight;
      this.inFlight = { plan: { ...plan, work: plan.work.map((w) => ({ ...w, request: copyOf(w.request) })) }, endMs };
    }
  }

  /** Stops timers and aborts every request. */
  close(): void {
    this.closed = true;
    this.clearTimer();
    for (const request of [...this.running, ...this.waiting]) request.abort();
  }

  // ---- realtime loop -----------------------------------------------------------------------

  private kick(): void {
    if (this.mode === "manual" || this.inFlight || this.closed) return;
    // Deferred so requests arriving in the same tick share the first step; replaces an idle wait.
    this.clearTimer();
    this.timer = this.later(0, () => this.runRealtime());
  }

  /**
   * Runs `fn` after `simMs`: on the virtual clock exactly; on the wall, setTimeout (which rounds
   * below 1 ms up to 1 ms) or, for late or tiny delays, setImmediate.
   */
  private later(simMs: number, fn: () => void): () => void {
    if (this.clock) return this.clock.after(Math.max(0, simMs), fn);
    const wallMs = simMs / this.timeScale;
    if (wallMs >= 1) {
      const t = setTimeout(fn, wallMs);
      return () => clearTimeout(t);
    }
    const i = setImmediate(fn);
    return () => clearImmediate(i);
  }

  private runRealtime(): void {
    this.timer = null;
    if (this.closed) return;
    const startMs = this.nextStepStart();
    if (startMs === null) return; // idle until the next submit
    const aheadMs = startMs - this.now();
    // Only future arrivals: wait for the clock to reach the first one (the wall: within 1 ms).
    if (this.clock ? aheadMs > 0 : aheadMs / this.timeScale >= 1) {
      this.timer = this.later(aheadMs, () => this.runRealtime());
      return;
    }
    const plan = this.planNextStep();
    if (!plan) return;
    const endMs = plan.startMs + plan.durationMs;
    this.inFlight = { plan, endMs };
    this.cursorMs = endMs;
    const finish = () => {
      this.timer = null;
      this.inFlight = null;
      if (this.closed) return;
      this.completeStep(plan, endMs);
      this.runRealtime();
    };
    this.timer = this.later(endMs - this.now(), finish);
  }

  private clearTimer(): void {
    if (!this.timer) return;
    this.timer();
    this.timer = null;
  }

  /**
   * Plans the next step. A planning pass can schedule nothing yet still make progress (it
   * preempted everything, or refused a request that can never fit), so it is retried.
   */
  private planNextStep(): StepPlan | null {
    for (let attempt = 0; attempt < 3; attempt++) {
      const startMs = this.nextStepStart();
      if (startMs === null) return null;
      const plan = this.planStep(startMs);
      if (plan) return plan;
    }
    return null;
  }

  /** The cursor while anything can run now; else the next readyAtMs; null when empty. */
  private nextStepStart(): number | null {
    if (this.running.length > 0) return this.cursorMs;
    if (this.waiting.length === 0) return null;
    let earliest = Infinity;
    for (const request of this.waiting) earliest = Math.min(earliest, request.readyAtMs);
    return Math.max(this.cursorMs, earliest);
  }

  // ---- scheduling --------------------------------------------------------------------------

  private planStep(startMs: number): StepPlan | null {
    let budget = this.profile.maxNumBatchedTokens;
    const work: ScheduledWork[] = [];
    let preempted = 0;

    // Decodes first (one token each), then running prefills, both in running (admission) order.
    const order = [...this.running.filter((r) => r.isDecoding), ...this.running.filter((r) => !r.isDecoding)];
    for (const request of order) {
      if (budget <= 0) break;
      if (request.status !== "running") continue; // preempted earlier in this loop
      const isDecode = request.isDecoding;
      const numNewTokens = Math.min(request.tokens.length - request.numComputed, budget);
      while (request.status === "running") {
        if (this.reserveBlocks(request, request.numComputed + numNewTokens)) {
          work.push({ request, numNewTokens, isDecode });
          budget -= numNewTokens;
          break;
        }
        const victim = this.running[this.running.length - 1];
        const victimWork = work.findIndex((w) => w.request === victim);
        if (victimWork >= 0) budget += work.splice(victimWork, 1)[0].numNewTokens;
        this.preempt(victim);
        preempted++;
      }
    }

    // vLLM admits nothing in a step that had to preempt.
    if (preempted === 0) budget = this.admitWaiting(startMs, budget, work);

    if (work.length === 0) return null;
    let prefillTokens = 0;
    let decodeSeqs = 0;
    for (const w of work) {
      if (w.isDecode) decodeSeqs++;
      else prefillTokens += w.numNewTokens;
    }
    const p = this.profile;
    const base = p.stepBaseMs + p.prefillMsPerToken * prefillTokens + p.decodeMsPerSeq * decodeSeqs;
    const jitter = 1 + p.jitter * (2 * this.rng.next() - 1);
    return {
      startMs,
      durationMs: base * jitter * this.slowFactor,
      prefillTokens,
      decodeSeqs,
      scheduledRequests: work.length,
      preempted,
      work,
    };
  }

  /** FCFS admission (of requests that have reached the scheduler) with prefix-cache reuse. */
  private admitWaiting(startMs: number, budget: number, work: ScheduledWork[]): number {
    const bs = this.pool.blockSize;
    let index = 0;
    while (index < this.waiting.length && this.running.length < this.profile.maxNumSeqs && budget > 0) {
      const request = this.waiting[index];
      // Not arrived yet in simulated time, or its adapter cannot join this batch: look further.
      if (request.readyAtMs > startMs || !this.loraFits(request)) {
        index++;
        continue;
      }
      extendBlockHashes(request.blockHashes, request.tokens, bs, chainRoot(request.lora));
      const maxHitBlocks = Math.floor((request.tokens.length - 1) / bs);
      const hit = this.pool.findCachedPrefix(request.blockHashes, maxHitBlocks);
      const computed = hit.length * bs;
      const numNewTokens = Math.min(request.tokens.length - computed, budget);
      this.pool.touch(hit);
      const fresh = this.pool.allocate(Math.ceil((computed + numNewTokens) / bs) - hit.length);
      if (!fresh) {
        this.pool.free(hit);
        if (this.running.length === 0 && work.length === 0) {
          // An empty engine cannot hold it: it would wait forever (servers refuse these upfront).
          this.finish(request, "abort", startMs);
          continue;
        }
        break; // not enough KV: it waits (FCFS head-of-line, as in vLLM)
      }
      this.waiting.splice(index, 1);
      this.pool.recordLookup(request.tokens.length, computed);
      if (request.cachedTokens < 0) request.cachedTokens = computed;
      request.blocks = [...hit, ...fresh];
      request.numComputed = computed;
      request.numRegisteredBlocks = hit.length;
      request.status = "running";
      this.running.push(request);
      work.push({ request, numNewTokens, isDecode: false });
      budget -= numNewTokens;
    }
    return budget;
  }

  /** Makes sure `request` has blocks for `numTokens` tokens; false if the pool is short. */
  private reserveBlocks(request: SimRequest, numTokens: number): boolean {
    const needed = Math.ceil(numTokens / this.pool.blockSize) - request.blocks.length;
    if (needed <= 0) return true;
    const fresh = this.pool.allocate(needed);
    if (!fresh) return false;
    request.blocks.push(...fresh);
    return true;
  }

  private preempt(request: SimRequest): void {
    this.removeFrom(this.running, request);
    this.releaseBlocks(request);
    request.status = "waiting";
    request.preemptions++;
    this.stats.preemptions++;
    this.waiting.unshift(request);
  }

  private releaseBlocks(request: SimRequest): void {
    this.pool.free(request.blocks);
    request.blocks = [];
    request.numComputed = 0;
    request.numRegisteredBlocks = 0;
  }

  // ---- step completion ---------------------------------------------------------------------

  private completeStep(plan: StepPlan, endMs: number): void {
    for (const { request, numNewTokens } of plan.work) {
      if (request.status !== "running") continue; // aborted while the step ran
      request.numComputed += numNewTokens;
      this.registerFullBlocks(request);
      if (request.numComputed === request.tokens.length) this.emitToken(request, endMs);
    }
  }

  /** Computed full blocks (prompt AND output) enter the prefix cache. */
  private registerFullBlocks(request: SimRequest): void {
    const bs = this.pool.blockSize;
    const fullBlocks = Math.floor(request.numComputed / bs);
    if (fullBlocks <= request.numRegisteredBlocks) return;
    extendBlockHashes(request.blockHashes, request.tokens, bs, chainRoot(request.lora));
    for (let i = request.numRegisteredBlocks; i < fullBlocks; i++) {
      this.pool.cacheBlock(request.blocks[i], request.blockHashes[i]);
    }
    request.numRegisteredBlocks = fullBlocks;
  }

  private emitToken(request: SimRequest, atMs: number): void {
    const text = request.nextWord();
    request.tokens.push(text);
    const index = request.outputTokens - 1;
    const last = request.outputTokens >= request.targetOutputTokens;
    const finishReason = last ? (request.targetOutputTokens >= request.maxTokens ? "length" : "stop") : null;
    this.stats.generationTokens++;
    if (request.lastTokenMs !== null) this.stats.itl.observe((atMs - request.lastTokenMs) / 1000);
    request.lastTokenMs = atMs;
    const event = { text, index, atMs, finishReason } as const;
    if (index === 0) {
      request.firstTokenMs = atMs;
      this.stats.ttft.observe(Math.max(0, atMs - request.arrivalMs) / 1000);
      request.emit("firstToken", event);
    }
    request.emit("token", event);
    if (finishReason) this.finish(request, finishReason, atMs);
  }

  private finish(request: SimRequest, reason: "stop" | "length" | "abort", atMs: number): void {
    if (request.status === "finished") return; // a token listener may have aborted it already
    if (request.status === "running") this.removeFrom(this.running, request);
    else this.removeFrom(this.waiting, request);
    this.releaseBlocks(request);
    request.status = "finished";
    this.stats.finished[reason]++;
    const e2eMs = Math.max(0, atMs - request.arrivalMs);
    if (reason !== "abort") this.stats.e2e.observe(e2eMs / 1000);
    const result: RequestResult = {
      id: request.id,
      promptTokens: request.promptLength,
      cachedTokens: Math.max(0, request.cachedTokens),
      outputTokens: request.outputTokens,
      finishReason: reason,
      arrivalMs: request.arrivalMs,
      firstTokenMs: request.firstTokenMs,
      finishMs: atMs,
      ttftMs: request.firstTokenMs === null ? null : Math.max(0, request.firstTokenMs - request.arrivalMs),
      e2eMs,
      preemptions: request.preemptions,
    };
    request.emit("done", result);
    this.emit("requestDone", result);
    if (!this.hasWork()) this.refreshLoraInfo();
  }

  private abortRequest(request: SimRequest): void {
    if (request.status === "finished") return;
    this.finish(request, "abort", this.now());
  }

  // ---- helpers -----------------------------------------------------------------------------

  private pickOutputLength(maxTokens: number, ignoreEos: boolean, promptSeed: number): number {
    if (ignoreEos) return Math.max(1, maxTokens);
    const sampler = new SeededRandom(promptSeed ^ 0x5bd1e995);
    const sampled = Math.round(sampler.logNormal(this.profile.meanOutputTokens, this.profile.outputTokensSigma));
    return Math.max(1, Math.min(maxTokens, sampled));
  }

  private loraFits(request: SimRequest): boolean {
    if (request.lora === null) return true;
    const active = new Set(this.lorasOf(this.running));
    return active.has(request.lora) || active.size < this.maxLoras;
  }

  private lorasOf(requests: readonly SimRequest[]): string[] {
    const names = new Set<string>();
    for (const r of requests) if (r.lora !== null) names.add(r.lora);
    return [...names].sort();
  }

  /** vllm:lora_requests_info's value is the time of the last change of its label set. */
  private refreshLoraInfo(): void {
    const key = this.lorasOf(this.running).join(",") + "|" + this.lorasOf(this.waiting).join(",");
    if (key !== this.loraKey) {
      this.loraKey = key;
      this.loraChangedAtSec = this.wallNowMs() / 1000;
    }
  }

  private removeFrom(list: SimRequest[], request: SimRequest): void {
    const index = list.indexOf(request);
    if (index >= 0) list.splice(index, 1);
  }
}
