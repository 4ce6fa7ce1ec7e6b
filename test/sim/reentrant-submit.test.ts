// A request submitted from inside a step's completion (a "done" listener: the virtual gateway
// sends a held request the moment another stream ends, as Envoy runs the stream's end in the same
// event as its last byte) joins the next step; it must not start a second step while one runs.
import { describe, expect, it } from "vitest";
import { SimEngine } from "../../host-test/sim/engine.js";
import { resolveProfile } from "../../host-test/sim/profiles.js";
import type { SimRequest } from "../../host-test/sim/request.js";
import { EventClock } from "../../bench/virtual/event-clock.js";

const PROFILE = resolveProfile("tiny", { maxNumSeqs: 2, jitter: 0 });
const prompt = (tag: string) => Array.from({ length: 40 }, (_, i) => `${tag}${i}`);

function tokenTimes(r: SimRequest): number[] {
  const t: number[] = [];
  r.on("token", (e) => t.push(e.atMs));
  return t;
}

describe("SimEngine, a submit from inside a step's completion", () => {
  it("runs one step at a time: no two tokens of a stream closer than the shortest step", () => {
    const clock = new EventClock();
    const engine = new SimEngine({ profile: PROFILE, mode: "virtual", clock, seed: 3 });
    const a = engine.submit({ promptTokens: prompt("a"), maxTokens: 3, ignoreEos: true });
    const b = engine.submit({ promptTokens: prompt("b"), maxTokens: 30, ignoreEos: true });
    const bTimes = tokenTimes(b);
    let c: SimRequest | null = null;
    let cTimes: number[] = [];
    a.on("done", () => { c = engine.submit({ promptTokens: prompt("c"), maxTokens: 10, ignoreEos: true }); cTimes = tokenTimes(c); });
    let steps = 0;
    while (clock.runNext()) steps++;
    expect(c).not.toBeNull();
    expect(bTimes).toHaveLength(30);
    expect(cTimes).toHaveLength(10);
    const gaps = (t: number[]) => t.slice(1).map((x, i) => x - t[i]);
    expect(Math.min(...gaps(bTimes), ...gaps(cTimes))).toBeGreaterThanOrEqual(PROFILE.stepBaseMs);
    expect(steps).toBeGreaterThan(0);
  });
});
