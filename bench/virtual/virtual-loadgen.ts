// The load generator of a virtual run: the same workload, arrivals (bench/arrivals.ts, same seed ->
// same schedule), multi-turn ordering (TurnQueue) and gateway spreading as bench/loadgen.ts, but
// driven by the event clock with callbacks instead of sockets and sleeps. Every time is virtual ms.
// Bounds: maxRequests; `maxMs` of virtual time for closed loops (the wall bound x time scale);
// after the last send, `drainMs` of virtual time for in-flight requests, then their clients abort.
// Failure behaviour: failures are records (ok: false); throws only on invalid options.
import { chatToPrompt, tokenize } from "../../host-test/sim/tokenizer.js";
import { openLoopTimes, type LoadgenResult, type LoadProgress, type LoadSpec, type RequestRecord } from "../loadgen.js";
import { GatewaySpreader, type SpreadMode } from "../spreader.js";
import { TurnQueue, type SessionState } from "../turn-queue.js";
import { chatCompletionBody, conversationMessages } from "../workloads/chat-request.js";
import type { Workload } from "../workloads/types.js";
import type { EventClock } from "./event-clock.js";
import type { VirtualOutcome, VirtualRequest } from "./virtual-gateway.js";

/** Where requests go: N gateways (or one central picker). */
export interface VirtualFront {
  count: number;
  send(index: number, req: VirtualRequest, onDone: (o: VirtualOutcome) => void): void;
  abortAll(): void;
}

export interface VirtualLoadOptions {
  clock: EventClock;
  front: VirtualFront;
  workload: Workload;
  load: LoadSpec;
  seed: number;
  spread?: SpreadMode;
  model?: string;
  maxRequests?: number;
  /** Closed loop: stop issuing after this much virtual time. */
  maxMs: number;
  drainMs: number;
  onProgress?(p: LoadProgress): void;
}

/** A run in progress: `done` turns true once every record is in; `result()` then summarises. */
export interface VirtualLoad {
  readonly done: boolean;
  readonly progress: LoadProgress;
  result(wallMs: number): LoadgenResult;
}

function toRecord(s: SessionState, turn: number, startMs: number, o: VirtualOutcome): RequestRecord {
  const itl: number[] = [];
  for (let i = 1; i < o.tokenMs.length; i++) itl.push(o.tokenMs[i] - o.tokenMs[i - 1]);
  return {
    session: s.session.id, turn, group: s.session.group, tag: s.session.tag, gateway: s.gateway,
    pod: o.pod, status: o.status, ok: o.error === null, error: o.error,
    startMs, ttftMs: o.firstTokenMs === null ? null : o.firstTokenMs - startMs, e2eMs: o.endMs - startMs,
    itlMs: itl, outputTokens: o.outputTokens, promptTokens: o.promptTokens, cachedTokens: o.cachedTokens,
  };
}

export function startVirtualLoad(opts: VirtualLoadOptions): VirtualLoad {
  const { clock, front } = opts;
  const spreader = new GatewaySpreader(front.count, opts.spread ?? "round_robin", opts.seed ^ 0x2545f491);
  const queue = new TurnQueue(opts.workload);
  const records: RequestRecord[] = [];
  const maxRequests = opts.maxRequests ?? Infinity;
  let sent = 0, failed = 0, inFlight = 0, deferredArrivals = 0, waitingArrivals = 0, idleWorkers = 0;
  let issuing = true;
  let stoppedBy: LoadgenResult["stoppedBy"] = opts.load.mode === "concurrency" ? "workload" : "arrivals";
  let drainTimer: (() => void) | null = null;

  const bounded = (): boolean => {
    if (sent >= maxRequests) stoppedBy = "maxRequests";
    else if (opts.load.mode === "concurrency" && clock.now() >= opts.maxMs) stoppedBy = "maxWallMs";
    else return false;
    return true;
  };
  const stopIssuing = () => {
    if (!issuing) return;
    issuing = false;
    queue.stop();
    drainTimer = clock.after(opts.drainMs, () => { drainTimer = null; front.abortAll(); });
  };
  const maybeFinished = () => {
    if (inFlight === 0 && !issuing && drainTimer) { drainTimer(); drainTimer = null; }
  };

  const send = (s: SessionState): void => {
    if (s.gateway < 0) s.gateway = spreader.assign();
    const turn = s.nextTurn;
    const messages = conversationMessages(s.session, turn, s.replies);
    const bodyObject = chatCompletionBody(messages, s.session.turns[turn].outputTokens, opts.model);
    const req: VirtualRequest = {
      id: `req-${sent}`, body: Buffer.from(JSON.stringify(bodyObject)), bodyObject,
      promptTokens: turn === 0 && s.session.promptTokens ? s.session.promptTokens() : tokenize(chatToPrompt(messages)),
      maxTokens: bodyObject.max_tokens,
    };
    sent++;
    inFlight++;
    const startMs = clock.now();
    front.send(s.gateway, req, (o) => {
      inFlight--;
      const record = toRecord(s, turn, startMs, o);
      records.push(record);
      if (!record.ok) failed++;
      queue.complete(s, record.ok, o.content);
      onCompletion();
    });
  };

  /** Closed loop: one worker takes the next ready turn, or waits for a completion to unlock one. */
  const work = (): void => {
    if (!issuing) return;
    if (bounded()) { stopIssuing(); return; }
    const s = queue.tryTake();
    if (s) { send(s); return; }
    if (inFlight > 0) { idleWorkers++; return; }
    stopIssuing(); // nothing ready, nothing in flight: the workload is exhausted
  };

  function onCompletion(): void {
    if (issuing) {
      if (opts.load.mode === "concurrency") {
        work(); // the worker whose request ended takes the next turn
        const idle = idleWorkers;
        idleWorkers = 0;
        for (let i = 0; i < idle; i++) work();
      } else {
        while (waitingArrivals > 0 && issuing) {
          if (bounded()) { stopIssuing(); break; }
          const s = queue.tryTake();
          if (!s) {
            if (inFlight === 0) { stoppedBy = "workload"; stopIssuing(); }
            break;
          }
          waitingArrivals--;
          send(s);
        }
        if (issuing && arrivalsLeft === 0 && waitingArrivals === 0) stopIssuing();
      }
    }
    maybeFinished();
  }

  let arrivalsLeft = 0;
  if (opts.load.mode === "concurrency") {
    for (let i = 0; i < opts.load.concurrency; i++) work();
  } else {
    const times = openLoopTimes(opts.load, opts.seed);
    arrivalsLeft = times.length;
    for (const t of times) {
      clock.at(t, () => {
        arrivalsLeft--;
        if (!issuing) return;
        if (bounded()) { stopIssuing(); maybeFinished(); return; }
        const s = waitingArrivals === 0 ? queue.tryTake() : null;
        if (s) send(s);
        else if (inFlight === 0 && queue.remainingTurns() === 0) { stoppedBy = "workload"; stopIssuing(); }
        else { deferredArrivals++; waitingArrivals++; }
        if (issuing && arrivalsLeft === 0 && waitingArrivals === 0) stopIssuing();
        maybeFinished();
      });
    }
    if (times.length === 0) stopIssuing();
  }

  return {
    get done() { return !issuing && inFlight === 0; },
    get progress() { return { sent, done: records.length, failed, inFlight, elapsedWallMs: clock.now() }; },
    result(wallMs: number): LoadgenResult {
      let first = Infinity, last = 0;
      for (const r of records) { first = Math.min(first, r.startMs); last = Math.max(last, r.startMs + r.e2eMs); }
      return {
        records, durationMs: records.length > 0 ? last - first : 0, wallMs, stoppedBy,
        unsentTurns: queue.remainingTurns() + queue.abandonedTurns, deferredArrivals,
      };
    },
  };
}
