// predicted_latency's wait for a batch slot: the list schedule of the open streams (slot_wait.ts)
// and what a VM knows of its streams per host, other gateways' streams as counts (open_streams.ts).
import { remainingDecode, slotWait } from "../policy/predicted_latency/slot_wait";
import { OpenStream, OpenStreams } from "../policy/predicted_latency/open_streams";
import { Xorshift } from "../util/prng";

/** The schedule done the slow way: every slot kept, the earliest found by a scan each time. */
function naiveWait(busy: f64[], pendingNow: f64[], pendingService: f64[], slots: i32): f64 {
  if (slots <= 0 || busy.length + pendingNow.length < slots) return 0;
  const t = new Array<f64>(0);
  for (let i = 0; i < busy.length; i++) t.push(max(0.0, busy[i]));
  while (t.length < slots) t.push(0.0);
  let free = t.length - busy.length;
  for (let j = 0; j < pendingNow.length; j++) {
    let at = 0;
    for (let i = 1; i < t.length; i++) if (t[i] < t[at]) at = i;
    if (free > 0) { t[at] = max(0.0, pendingNow[j]); free--; } else t[at] = t[at] + max(0.0, pendingService[j]);
  }
  let m = t[0];
  for (let i = 1; i < t.length; i++) m = min(m, t[i]);
  return m;
}

const NONE: f64[] = [];

describe("slotWait", () => {
  it("is 0 while a slot is free, or without known slots", () => {
    expect(slotWait([300, 200, 100], NONE, NONE, 4)).toBe(0);
    expect(slotWait([300, 200, 100], [50], [80], 5)).toBe(0);
    expect(slotWait([300, 200, 100, 50], NONE, NONE, 0)).toBe(0);
  });
  it("full: the earliest end among the running streams", () => {
    expect(slotWait([300, 200, 100, 50], NONE, NONE, 4)).toBe(50);
    // More started than slots (the engine has more): still the earliest end.
    expect(slotWait([300, 200, 100, 50, 400], NONE, NONE, 4)).toBe(50);
  });
  it("streams queued ahead take the slots that free first (FCFS), then the newcomer", () => {
    // Slots free at 50 and 100; the first queued runs 50 -> 130, the second 100 -> 180; next: 130.
    expect(slotWait([300, 200, 100, 50], [999, 999], [80, 80], 4)).toBe(130);
    // A long queued stream moves the newcomer to the next slot instead.
    expect(slotWait([300, 200, 100, 50], [999], [1000], 4)).toBe(100);
  });
  it("a pending stream takes a free slot from now (its remaining time), not its whole service", () => {
    // 3 running, one slot free: the pending stream holds it until 40, then it is the newcomer's.
    expect(slotWait([300, 200, 100], [40], [500], 4)).toBe(40);
  });
  it("the (q - slots + 1)-th end when the queued streams are long", () => {
    expect(slotWait([10, 20, 30, 40], [1000, 1000], [1000, 1000], 4)).toBe(30);
  });
  it("equals the full schedule on random pods (the heap against a scan for the earliest slot)", () => {
    const rng = new Xorshift(17);
    const scratch = new Array<f64>(0);
    for (let c = 0; c < 500; c++) {
      const slots = 1 + <i32>rng.nextBelow(12);
      const busy = new Array<f64>(0);
      const pn = new Array<f64>(0);
      const ps = new Array<f64>(0);
      const nb = <i32>rng.nextBelow(16);
      const np = <i32>rng.nextBelow(10);
      for (let i = 0; i < nb; i++) busy.push(<f64>rng.nextBelow(1000) - 20);
      for (let j = 0; j < np; j++) { pn.push(<f64>rng.nextBelow(800)); ps.push(<f64>rng.nextBelow(900)); }
      expect(slotWait(busy, pn, ps, slots, c % 2 == 0 ? scratch : null)).toBe(naiveWait(busy, pn, ps, slots));
    }
  });
  it("negative inputs count as 0", () => {
    expect(slotWait([-5, 100, 100, 100], NONE, NONE, 4)).toBe(0);
  });
});

describe("remainingDecode", () => {
  it("before a second token (or with the body in one piece): the tokens due since the first", () => {
    // 96 tokens at 10 ms: the first came 200 ms ago, so ~21 done, 75 left.
    expect(remainingDecode(96, 1, 200, 200, 10)).toBeCloseTo(750, 6);
    expect(remainingDecode(96, 1, 5000, 5000, 10)).toBe(0);
    expect(remainingDecode(96, 1, 0, 0, NaN)).toBe(0);
    expect(remainingDecode(1, 1, 0, 0, 10)).toBe(0);
  });
  it("streaming: the tokens seen plus those due since the last chunk (a slow host is not taken as on time)", () => {
    // 30 seen, the last 20 ms ago: 32 done, 64 x 10 ms left, though 500 ms since the first would say 51.
    expect(remainingDecode(96, 30, 500, 20, 10)).toBeCloseTo(640, 6);
    expect(remainingDecode(96, 96, 900, 0, 10)).toBe(0);
  });
});

function stream(host: string, picked: f64, expected: f64, first: f64): OpenStream {
  const s = new OpenStream(host, picked, expected, 0, 0, 0, 20, 20, 10);
  s.firstMs = first;
  s.lastMs = first;
  return s;
}

describe("OpenStreams", () => {
  it("reuses a host's wait and prefill ahead for WAIT_REUSE_MS while its streams and counts stay the same", () => {
    const o = new OpenStreams();
    o.add(stream("a", 0, 100, 20));
    o.add(stream("a", 0, 100, 420));
    const p = stream("a", 510, 100, 0);
    p.uncached = 500;
    o.add(p);
    const w = o.waitFor("a", 3, 2, 10, 20, 128, 520);
    expect(w).toBeGreaterThan(0);
    const pf = o.prefillAhead("a", 520);
    expect(pf).toBe(500);
    // 1 ms later: the same wait less the time since, even though a stream started meanwhile.
    p.firstMs = 520.5;
    expect(o.waitFor("a", 3, 2, 10, 20, 128, 521)).toBeCloseTo(w - 1, 9);
    expect(o.prefillAhead("a", 521)).toBe(pf);
    // Another host's new stream does not touch host a's.
    o.add(stream("b", 0, 100, 20));
    expect(o.waitFor("a", 3, 2, 10, 20, 128, 521.5)).toBeCloseTo(w - 1.5, 9);
    // A changed count, a new stream on a, or the window passed: computed again.
    const fresh = o.computeWait("a", 3, 0, 2, 10, 20, 128, 521.5);
    expect(fresh).not.toBeCloseTo(w - 1.5, 3); // p now runs: the schedule differs
    expect(o.waitFor("a", 4, 2, 10, 20, 128, 521.5)).toBeCloseTo(o.computeWait("a", 3, 1, 2, 10, 20, 128, 521.5), 9);
    expect(o.waitFor("a", 3, 2, 10, 20, 128, 523)).toBeCloseTo(o.computeWait("a", 3, 0, 2, 10, 20, 128, 523), 9);
    expect(o.prefillAhead("a", 523)).toBe(0);
    o.add(stream("a", 523, 100, 0));
    expect(o.waitFor("a", 4, 2, 10, 20, 128, 523.1)).toBeCloseTo(o.computeWait("a", 4, 0, 2, 10, 20, 128, 523.1), 9);
  });
  it("waits for the running stream nearest its end; none while slots are free", () => {
    const o = new OpenStreams();
    o.add(stream("a", 0, 100, 20));  // started at 20: at 520, 51 done, 49 x 10 ms left
    o.add(stream("a", 0, 100, 420)); // 11 done, 89 left
    expect(o.waitFor("a", 2, 2, 10, 20, 128, 520)).toBeCloseTo(490, 6);
    expect(o.waitFor("a", 2, 3, 10, 20, 128, 520)).toBe(0);
    expect(o.waitFor("b", 0, 2, 10, 20, 128, 520)).toBe(0);
  });
  it("a stream not started yet waits behind the running ones with its whole service time", () => {
    const o = new OpenStreams();
    o.add(stream("a", 0, 11, 10));   // started: at 60, 6 done, 5 x 10 = 50 ms left
    o.add(stream("a", 50, 11, 0));   // pending: queued, 20 + 10 x 10 = 120 ms once admitted
    // One slot: the pending one gets it at 50, ends at 170; the newcomer waits 170.
    expect(o.waitFor("a", 2, 1, 10, 20, 128, 60)).toBeCloseTo(170, 6);
  });
  it("other gateways' streams (fleet count - own) count as average streams of the host", () => {
    const o = new OpenStreams();
    // No finished stream yet: 20 ms + (128 - 1) x 10 ms of service, half of it left: 645 ms.
    expect(o.waitFor("a", 2, 2, 10, 20, 128, 0)).toBeCloseTo(645, 6);
    // A finished stream teaches the host's decode time (first chunk -> end: 300 ms).
    const done = stream("a", 0, 31, 20);
    done.endMs = 320;
    done.status = 200;
    o.add(done);
    expect(o.count("a")).toBe(1);
    o.remove(done);
    expect(o.count("a")).toBe(0);
    expect(o.waitFor("a", 2, 2, 10, 20, 128, 0)).toBeCloseTo(160, 6);
    // Beyond the slots, the others queue with their whole service time (both slots free at 160, each queued one runs 320 ms: 480).
    expect(o.waitFor("a", 3, 2, 10, 20, 128, 0)).toBeCloseTo(160, 6);
    expect(o.waitFor("a", 4, 2, 10, 20, 128, 0)).toBeCloseTo(480, 6);
  });
  it("reads a streaming response's progress from its SSE events", () => {
    const o = new OpenStreams();
    const s = stream("a", 0, 96, 100);
    const event = Uint8Array.wrap(String.UTF8.encode("data: {}\n\n"));
    for (let i = 0; i < 30; i++) s.tally.scan(event);
    s.lastMs = 580;
    o.add(s);
    // At 600: 30 seen + 2 due since the last chunk, 64 x 10 ms left (the clock alone would say 460).
    expect(o.waitFor("a", 1, 1, 10, 20, 128, 600)).toBeCloseTo(640, 6);
  });
  it("prefill ahead: the uncached prompt tokens of the streams not started yet", () => {
    const o = new OpenStreams();
    const started = new OpenStream("a", 0, 10, 1500, 0, 0, 20, 20, 10);
    started.firstMs = 30;
    o.add(started);
    o.add(new OpenStream("a", 40, 10, 2000, 0, 0, 20, 20, 10));
    o.add(new OpenStream("a", 45, 10, 100, 0, 0, 20, 20, 10));
    o.add(new OpenStream("b", 45, 10, 700, 0, 0, 20, 20, 10));
    expect(o.prefillAhead("a")).toBe(2100);
    expect(o.prefillAhead("b")).toBe(700);
    expect(o.prefillAhead("c")).toBe(0);
  });
  it("removing a stream twice, or one never added, is a no-op", () => {
    const o = new OpenStreams();
    const s = stream("a", 0, 10, 0);
    o.remove(s);
    o.add(s);
    o.remove(s);
    o.remove(s);
    expect(o.count("a")).toBe(0);
  });
});
