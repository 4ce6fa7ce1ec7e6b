// predicted_latency on inputs from outside that once trapped the VM (an AssemblyScript trap stops
// the plugin on that worker for every request): a client's `max_tokens` of 1e999 (Infinity) made
// every score infinite and the choice took a remainder by an empty tie list; a replica blob whose
// length field ran past the buffer wrapped the cursor before it; a fleet count of a billion looped
// a billion times.
import { chooseBySlo, Draws, PICK_TPOT_FIT } from "../policy/predicted_latency/choose";
import { parseBlob } from "../policy/predicted_latency/replica_records";
import { OTHERS_MAX, OTHERS_PER_SLOT_MAX, OpenStreams } from "../policy/predicted_latency/open_streams";

const ALL: bool[] = [true, true, true];
const D = new Draws(0.5, 7);

describe("hostile inputs", () => {
  it("an infinite expected output (no SLO) still chooses a host, with or without harm and the load band", () => {
    const ttft: f64[] = [40, 50, 60];
    const tpot: f64[] = [10, 10, 0];
    const c = chooseBySlo(ttft, tpot, ALL, 0, 0, PICK_TPOT_FIT, 0, false, Infinity, D);
    expect(c.index >= 0 && c.index < 3).toBe(true);
    const harm: f64[] = [0, 1, 0];
    const inflight: f64[] = [3, 2, 1];
    const uncached: f64[] = [100, 100, 100];
    const h = chooseBySlo(ttft, tpot, ALL, 0, 0, PICK_TPOT_FIT, 0, false, Infinity, D, harm, null, inflight, uncached);
    expect(h.index >= 0 && h.index < 3).toBe(true);
    const nan: f64[] = [NaN, NaN, NaN];
    const n = chooseBySlo(ttft, tpot, ALL, 0, 0, PICK_TPOT_FIT, 0, false, 100, D, nan, nan, inflight, uncached);
    expect(n.index >= 0 && n.index < 3).toBe(true);
  });
  it("predictions no host meets by an infinite margin still give the least late host", () => {
    const inf: f64[] = [Infinity, Infinity, Infinity];
    const c = chooseBySlo(inf, [10, 10, 10], ALL, 150, 20, PICK_TPOT_FIT, 0, false, 100, D);
    expect(c.reason).toBe("slo_unmet");
    expect(c.index >= 0 && c.index < 3).toBe(true);
    const t = chooseBySlo([10, 10, 10], inf, ALL, 150, 20, PICK_TPOT_FIT, 0, false, 100, D);
    expect(t.index >= 0 && t.index < 3).toBe(true);
  });
  it("a replica blob whose length runs past the buffer (or wraps an i32) is refused, not read before it", () => {
    const values: ArrayBuffer[] = [];
    const at: f64[] = [];
    parseBlob(String.UTF8.encode("0 2147483647\nx\n"), values, at);
    parseBlob(String.UTF8.encode("0 4294967296\nx\n"), values, at);
    parseBlob(String.UTF8.encode("0 " + "9".repeat(400) + "\nx\n"), values, at);
    expect(values.length).toBe(0);
    parseBlob(String.UTF8.encode("5 1\nx\n"), values, at);
    expect(values.length).toBe(1);
  });
  it("a fleet count of a billion on a host is scheduled as at most OTHERS_PER_SLOT_MAX per slot, OTHERS_MAX in all", () => {
    // The same wait as the clamped count, computed by a fresh tracker (no reuse of a wait).
    const w = new OpenStreams().waitFor("h", 1e9, 4, 10, 50, 100, 0);
    expect(isFinite(w)).toBe(true);
    expect(w).toBeGreaterThan(0);
    expect(w).toBe(new OpenStreams().waitFor("h", <f64>(4 * OTHERS_PER_SLOT_MAX), 4, 10, 50, 100, 0));
    expect(w).toBeGreaterThan(new OpenStreams().waitFor("h", <f64>(4 * OTHERS_PER_SLOT_MAX - 8), 4, 10, 50, 100, 0));
    // 2,000 slots: OTHERS_MAX (65,536) binds before 64 per slot (128,000).
    const big = new OpenStreams().waitFor("h2", 1e18, 2000, 10, 50, 100, 0);
    expect(isFinite(big)).toBe(true);
    expect(big).toBeGreaterThan(0);
    expect(big).toBe(new OpenStreams().waitFor("h2", OTHERS_MAX, 2000, 10, 50, 100, 0));
    expect(big).toBeGreaterThan(new OpenStreams().waitFor("h2", OTHERS_MAX - 4000, 2000, 10, 50, 100, 0));
  });
});
