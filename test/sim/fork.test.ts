// SimEngine.fork / copyFrom: a copy of a virtual-mode engine in mid-run (a step in flight, queued
// and preempted requests, chunked prefills, a shared prefix cache, KV pressure), stepped on its
// own, gives a new request exactly the token times the real engine gives it when nothing else
// arrives; and forking never changes what the real engine does.
import { describe, expect, it } from "vitest";
import { SimEngine } from "../../host-test/sim/engine.js";
import { resolveProfile } from "../../host-test/sim/profiles.js";
import { SeededRandom } from "../../host-test/sim/random.js";
import type { SimRequest } from "../../host-test/sim/request.js";
import { EventClock } from "../../bench/virtual/event-clock.js";

// A small pool (128 blocks of 16) and batch budget: long prompts prefill in chunks and preempt.
const PROFILE = resolveProfile("tiny", { numGpuBlocks: 128, maxNumSeqs: 4, maxNumBatchedTokens: 256, jitter: 0.1 });

interface Arrival { at: number; prompt: string[]; maxTokens: number; overhead: number }

function arrivals(seed: number, n: number): Arrival[] {
  const rng = new SeededRandom(seed);
  const system = [0, 1, 2].map((s) => Array.from({ length: 200 }, (_, i) => `sys${s}_${i}`));
  let at = 0;
  return Array.from({ length: n }, (_, k) => {
    at += -Math.log(1 - rng.next()) * 4;
    const own = Array.from({ length: 20 + rng.int(400) }, (_, i) => `r${k}_${i}`);
    return { at, prompt: [...system[rng.int(3)], ...own], maxTokens: 5 + rng.int(60), overhead: rng.uniform(0.5, 1.5) };
  });
}

const times = (r: SimRequest) => {
  const t: number[] = [];
  r.on("token", (e) => t.push(e.atMs));
  return t;
};

/** Runs the arrivals before `cut` on a virtual engine; at `cut`, `atCut` runs (then the probe, if any, is submitted). */
function run(list: Arrival[], cut: number, probe: Arrival | null, atCut?: (engine: SimEngine, clock: EventClock) => void) {
  const clock = new EventClock();
  const engine = new SimEngine({ profile: PROFILE, mode: "virtual", clock, seed: 5 });
  const all: number[][] = [];
  for (const a of list.filter((x) => x.at < cut)) {
    clock.at(a.at, () => all.push(times(engine.submit({ promptTokens: a.prompt, maxTokens: a.maxTokens, ignoreEos: true, apiOverheadMs: a.overhead }))));
  }
  let probeTimes: number[] = [];
  clock.at(cut, () => {
    atCut?.(engine, clock);
    if (probe) probeTimes = times(engine.submit({ promptTokens: probe.prompt, maxTokens: probe.maxTokens, ignoreEos: true, apiOverheadMs: probe.overhead }));
  });
  while (clock.runNext());
  return { all, probeTimes, preemptions: engine.stats.preemptions };
}

describe("SimEngine.fork", () => {
  const list = arrivals(3, 120);
  const probe: Arrival = { at: 0, prompt: [...Array.from({ length: 200 }, (_, i) => `sys1_${i}`), ...Array.from({ length: 150 }, (_, i) => `p${i}`)], maxTokens: 30, overhead: 0.9 };

  it("gives a new request the real engine's token times to the ulp when nothing else arrives", () => {
    expect(run(list, Infinity, null).preemptions).toBeGreaterThan(0); // the KV pool is tight enough to preempt
    let checked = 0;
    const scratch = new SimEngine({ profile: PROFILE, mode: "manual" });
    for (const cut of [30, 95.5, 180, 241.3, 300, 377]) {
      const real = run(list, cut, probe).probeTimes;
      let forked: number[] = [];
      let reused: number[] = [];
      run(list, cut, null, (engine, clock) => {
        for (const [copy, out] of [[engine.fork(), (t: number[]) => { forked = t; }], [scratch, (t: number[]) => { reused = t; }]] as const) {
          if (copy === scratch) scratch.copyFrom(engine);
          const t = times(copy.submit({ promptTokens: probe.prompt, maxTokens: probe.maxTokens, ignoreEos: true, arrivalMs: clock.now(), apiOverheadMs: probe.overhead }));
          while (copy.step());
          out(t);
        }
      });
      expect(real.length).toBe(probe.maxTokens);
      expect(forked).toEqual(real);
      expect(reused).toEqual(real);
      checked++;
    }
    expect(checked).toBe(6);
  });

  it("leaves the real engine's run unchanged", () => {
    const plain = run(list, Infinity, null).all;
    const clock = new EventClock();
    const engine = new SimEngine({ profile: PROFILE, mode: "virtual", clock, seed: 5 });
    const all: number[][] = [];
    for (const a of list) {
      clock.at(a.at, () => {
        // A fork run to the end before and after each submit.
        engine.fork().runVirtual();
        all.push(times(engine.submit({ promptTokens: a.prompt, maxTokens: a.maxTokens, ignoreEos: true, apiOverheadMs: a.overhead })));
        const f = engine.fork();
        f.submit({ promptTokens: a.prompt, maxTokens: 40, ignoreEos: true, arrivalMs: clock.now() });
        f.runVirtual();
      });
    }
    while (clock.runNext());
    expect(all).toEqual(plain);
  });
});
