// predicted_latency's choice by headroom (best fit / most headroom, shedding sheddable requests
// no host can serve in time, the least late otherwise, load gate, exploration, ties) and its response tally.
import { chooseBySlo, Draws, headroomOf, LOAD_BAND, NO_MODEL, PICK_BEST_FIT, PICK_MOST_HEADROOM, PICK_TPOT_FIT, SHED } from "../policy/predicted_latency/choose";
import { ResponseTally } from "../policy/predicted_latency/response_scan";

const ALL3: bool[] = [true, true, true];
const NO_EXPLORE = new Draws(0.99, 0);

describe("chooseBySlo", () => {
  it("headroom is the tightest of the given SLOs, relative", () => {
    expect(headroomOf(50, 10, 100, 0)).toBeCloseTo(0.5);
    expect(headroomOf(50, 18, 100, 20)).toBeCloseTo(0.1);
    expect(headroomOf(150, 10, 100, 0)).toBeCloseTo(-0.5);
  });
  it("best fit takes the feasible host with the least headroom, most headroom the most", () => {
    const ttft: f64[] = [90, 40, 120];
    const tpot: f64[] = [10, 10, 10];
    const bf = chooseBySlo(ttft, tpot, ALL3, 100, 0, PICK_BEST_FIT, 0, false, 0, NO_EXPLORE);
    expect(bf.index).toBe(0);
    expect(bf.reason).toBe("slo_best_fit");
    expect(chooseBySlo(ttft, tpot, ALL3, 100, 0, PICK_MOST_HEADROOM, 0, false, 0, NO_EXPLORE).index).toBe(1);
  });
  it("a TPOT SLO changes the pick", () => {
    const ttft: f64[] = [50, 50, 50];
    const tpot: f64[] = [30, 10, 15];
    expect(chooseBySlo(ttft, tpot, ALL3, 0, 20, PICK_BEST_FIT, 0, false, 0, NO_EXPLORE).index).toBe(2);
  });
  it("tpot_fit: a loose TPOT SLO goes to the slowest hosts that fit, the lowest TTFT among them", () => {
    // Hosts 0 and 2 slow (TPOT 14-15), 1 and 3 fast (8); host 0 has a longer wait than host 2.
    const ttft: f64[] = [300, 60, 120, 40];
    const tpot: f64[] = [15, 8, 14, 8.2];
    const loose = chooseBySlo(ttft, tpot, [true, true, true, true], 600, 30, PICK_TPOT_FIT, 0, false, 0, NO_EXPLORE);
    expect(loose.index).toBe(2);
    expect(loose.reason).toBe("slo_tpot_fit");
    // A tight TPOT SLO: only the fast ones fit; the one whose slot frees first.
    expect(chooseBySlo(ttft, tpot, [true, true, true, true], 150, 11, PICK_TPOT_FIT, 0, false, 0, NO_EXPLORE).index).toBe(3);
    // The slow ones cannot meet the loose TTFT SLO: the fast ones after all.
    expect(chooseBySlo([700, 60, 800, 40], tpot, [true, true, true, true], 600, 30, PICK_TPOT_FIT, 0, false, 0, NO_EXPLORE).index).toBe(3);
    // Best fit would take the least headroom overall (host 0: both at half their SLO).
    expect(chooseBySlo(ttft, tpot, [true, true, true, true], 600, 30, PICK_BEST_FIT, 0, false, 0, NO_EXPLORE).index).toBe(0);
    // Without a TPOT SLO: most headroom.
    expect(chooseBySlo(ttft, tpot, [true, true, true, true], 600, 0, PICK_TPOT_FIT, 0, false, 0, NO_EXPLORE).index).toBe(3);
  });
  it("no host can meet it: sheddable -> shed, others -> the least late", () => {
    const ttft: f64[] = [300, 200, 250];
    const tpot: f64[] = [10, 10, 10];
    expect(chooseBySlo(ttft, tpot, ALL3, 100, 0, PICK_BEST_FIT, 0, true, 0, NO_EXPLORE).index).toBe(SHED);
    const c = chooseBySlo(ttft, tpot, ALL3, 100, 0, PICK_BEST_FIT, 0, false, 0, NO_EXPLORE);
    expect(c.index).toBe(1);
    expect(c.reason).toBe("slo_unmet");
  });
  it("the load gate excludes hosts however good their prediction", () => {
    expect(chooseBySlo([10, 90, 95], [1, 1, 1], [false, true, true], 0, 0, PICK_BEST_FIT, 0, false, 0, NO_EXPLORE).index).toBe(1);
  });
  it("without an SLO: the lowest ttft + tpot x expected tokens", () => {
    const c = chooseBySlo([100, 50, 80], [6, 20, 5], ALL3, 0, 0, PICK_BEST_FIT, 0, false, 100, NO_EXPLORE);
    expect(c.index).toBe(2);
    expect(c.reason).toBe("lowest_latency");
  });
  it("without an SLO, hosts within LOAD_BAND of the lowest score holding as much of the prompt: the fewest in flight", () => {
    // Scores 100 + 5 x 100 = 600, 630 (5% more), 700: host 1 has fewer in flight.
    const ttft: f64[] = [100, 130, 200];
    const tpot: f64[] = [5, 5, 5];
    const inflight: f64[] = [6, 2, 0];
    const same: f64[] = [500, 500, 500];
    expect(chooseBySlo(ttft, tpot, ALL3, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE).index).toBe(0);
    const c = chooseBySlo(ttft, tpot, ALL3, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, null, null, inflight, same);
    expect(c.index).toBe(1);
    expect(c.reason).toBe("alike_fewest");
    // Host 2 has the fewest but is beyond the band (700 > 600 x 1.1).
    expect(LOAD_BAND).toBeLessThan(700.0 / 600.0 - 1);
    // Host 1 holds less of the prompt than host 0: its gap is the cache, not the model's noise.
    expect(chooseBySlo(ttft, tpot, ALL3, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, null, null, inflight, [0, 500, 500]).index).toBe(0);
    // ...and one holding more of it is alike.
    expect(chooseBySlo(ttft, tpot, ALL3, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, null, null, inflight, [500, 0, 500]).index).toBe(1);
    // Equal in flight: the lowest score.
    const tie = chooseBySlo(ttft, tpot, ALL3, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, null, null, [2, 2, 0], same);
    expect(tie.index).toBe(0);
    expect(tie.reason).toBe("lowest_latency");
  });
  it("without an SLO, alike hosts with as few in flight: the least recently picked, by any gateway", () => {
    // Scores 600, 630, 610: alike (within LOAD_BAND), one in flight each, the same prompt held.
    const ttft: f64[] = [100, 130, 110];
    const tpot: f64[] = [5, 5, 5];
    const one: f64[] = [1, 1, 1];
    const same: f64[] = [500, 500, 500];
    // Host 0 was picked last, host 1 longest ago: host 1, though its score is the highest of the three.
    const c = chooseBySlo(ttft, tpot, ALL3, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, null, null, one, same, [3000.5, 1000.25, 2000]);
    expect(c.index).toBe(1);
    expect(c.reason).toBe("alike_fewest");
    // A host never stamped (-1) is the oldest.
    expect(chooseBySlo(ttft, tpot, ALL3, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, null, null, one, same, [3000, 1000, -1]).index).toBe(2);
    // Equal stamps (or none): the lowest score, as before.
    expect(chooseBySlo(ttft, tpot, ALL3, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, null, null, one, same, [5, 5, 5]).index).toBe(0);
    expect(chooseBySlo(ttft, tpot, ALL3, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, null, null, one, same, null).index).toBe(0);
    // Fewer in flight still comes first; a host beyond the band is never taken for its age.
    expect(chooseBySlo(ttft, tpot, ALL3, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, null, null, [1, 2, 1], same, [3000, 1000, 2000]).index).toBe(2);
    expect(chooseBySlo([100, 300, 110], tpot, ALL3, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, null, null, one, same, [3000, 1000, 2000]).index).toBe(2);
    // With the harm rule too (the hosts within LATENCY_BAND harming no stream).
    expect(chooseBySlo(ttft, tpot, ALL3, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, [0, 0, 0], null, one, same, [3000, 1000, 2000]).index).toBe(1);
  });
  it("explores among the feasible hosts only", () => {
    const ttft: f64[] = [90, 40, 500];
    const tpot: f64[] = [1, 1, 1];
    const seen = [0, 0, 0];
    for (let p: u32 = 0; p < 10; p++) seen[chooseBySlo(ttft, tpot, ALL3, 100, 0, PICK_BEST_FIT, 0.05, false, 0, new Draws(0.01, p)).index]++;
    expect(seen[0]).toBeGreaterThan(0);
    expect(seen[1]).toBeGreaterThan(0);
    expect(seen[2]).toBe(0);
  });
  it("breaks near ties at random, and reports no model when nothing is predicted", () => {
    const seen = [0, 0, 0];
    for (let p: u32 = 0; p < 9; p++) seen[chooseBySlo([50, 50, 50], [1, 1, 1], ALL3, 100, 0, PICK_BEST_FIT, 0, false, 0, new Draws(0.9, p)).index]++;
    expect(seen[0]).toBe(3);
    expect(seen[1]).toBe(3);
    expect(chooseBySlo([NaN, NaN, NaN], [NaN, NaN, NaN], ALL3, 100, 0, PICK_BEST_FIT, 0, false, 0, NO_EXPLORE).index).toBe(NO_MODEL);
  });
});

function bytes(s: string): Uint8Array {
  return Uint8Array.wrap(String.UTF8.encode(s));
}

describe("ResponseTally", () => {
  it("counts SSE events across chunks and reads the usage of the stream", () => {
    const t = new ResponseTally();
    t.scan(bytes("data: {\"choices\":[{\"text\":\"a\"}]}\n\nda"));
    t.scan(bytes("ta: {\"choices\":[{\"text\":\"b\"}]}\n\n"));
    t.scan(bytes("data: {\"choices\":[{\"text\":\"c\"}]}\n\ndata: [DONE]\n\n"));
    expect(t.events).toBe(3);
    const s = new ResponseTally();
    s.scan(bytes("data: {\"choices\":[{\"text\":\"a\"}]}\n\n"));
    s.scan(bytes("data: {\"choices\":[{\"text\":\"b\"}]}\n\ndata: [DONE]\n\n"));
    expect(s.events).toBe(3);
    expect(s.tokens()).toBe(2);
    s.scan(bytes("data: {\"usage\":{\"prompt_tokens\":9,\"completion_tokens\": 17,\"total_tokens\":26}}\n\n"));
    expect(s.tokens()).toBe(17);
  });
  it("reads completion_tokens of a JSON body and ignores a data: inside a line", () => {
    const t = new ResponseTally();
    t.scan(bytes("{\"text\":\"x data: y\",\"usage\":{\"completion_tokens\":42}}"));
    expect(t.events).toBe(0);
    expect(t.tokens()).toBe(42);
  });
  it("reads the share of the prompt the engine found cached (prompt_tokens_details.cached_tokens)", () => {
    const t = new ResponseTally();
    t.scan(bytes("data: {\"choices\":[{\"delta\":{\"content\":\"say \\\"prompt_tokens\\\": 1\"}}]}\n\n"));
    expect(t.cachedShare()).toBe(-1);
    t.scan(bytes("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":200,\"completion_tokens\":5,\"total_tokens\":205,"));
    expect(t.cachedShare()).toBe(-1); // no cached_tokens yet (an engine without prompt tokens details)
    t.scan(bytes("\"prompt_tokens_details\":{\"cached_tokens\":150}}}\n\ndata: [DONE]\n\n"));
    expect(t.promptTokens).toBe(200);
    expect(t.cachedShare()).toBeCloseTo(0.75);
    expect(t.tokens()).toBe(5);
  });
  it("misses a key cut at a chunk's end (never reads past it), and counts events after a newline ending the chunk", () => {
    const t = new ResponseTally();
    t.scan(bytes("data: {\"usage\":{\""));
    t.scan(bytes("completion_tokens\":5,\"prompt_tokens\":9,\"cached_to"));
    t.scan(bytes("kens\":4}}\n"));
    expect(t.completionTokens).toBe(-1);
    expect(t.promptTokens).toBe(9);
    expect(t.cachedShare()).toBe(-1);
    t.scan(bytes("data: [DONE]\n\n"));
    expect(t.events).toBe(2);
  });
});
