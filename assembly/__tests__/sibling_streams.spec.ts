// The records the worker VMs of one Envoy share (policy/predicted_latency/sibling_streams.ts):
// lines written and parsed back, stale / own / malformed records and lines ignored, the siblings'
// held requests in deadline order, the correction of a count read by the siblings' picks and ends,
// and the slot wait with a sibling's streams (OpenStreams.computeWait).
import { OpenStream, OpenStreams, SiblingStream } from "../policy/predicted_latency/open_streams";
import { ageOf, dropEmpty, netSince, parseRecord, READ_BYTES_PER_MS, readInterval, SIB_STALE_MS, SiblingHolds, writeStreamLine } from "../policy/predicted_latency/sibling_streams";
import { RecordWriter } from "../policy/predicted_latency/record_bytes";

function open(host: string, picked: f64, expected: f64, first: f64): OpenStream {
  const s = new OpenStream(host, picked, expected, 300, 0, 0, 20, 20, 10);
  s.firstMs = first;
  s.lastMs = first;
  return s;
}

/** A stream's line as a record holds it. */
function streamLine(s: OpenStream, published: f64): string {
  const w = new RecordWriter();
  writeStreamLine(w, s, published);
  return String.UTF8.decode(w.bytes());
}

/** A record's bytes, as shared data holds them. */
function rec(text: string): ArrayBuffer { return String.UTF8.encode(text); }

function sib(picked: f64, expected: f64, first: f64): SiblingStream {
  return new SiblingStream(picked, 20, expected, 0, first, first, first > 0 ? 1 : 0);
}

describe("sibling records", () => {
  it("a stream's line parses back to what the slot wait needs", () => {
    const s = open("10.0.0.1:8000", 100.4, 96, 130);
    s.lastMs = 150;
    const into = new Map<string, SiblingStream[]>();
    const line = streamLine(s, 200);
    expect(line).toBe("10.0.0.1:8000 101 20 96 300 71 51 0 0"); // times as their age at 200, + 1; no TPOT SLO
    expect(parseRecord(rec("b 200\n" + line), "a", 250, into)).toBe(200);
    const got = into.get("10.0.0.1:8000");
    expect(got.length).toBe(1);
    expect(got[0].pickedMs).toBe(100);
    expect(got[0].baseTtft).toBe(20);
    expect(got[0].expected).toBe(96);
    expect(got[0].uncached).toBe(300);
    expect(got[0].firstMs).toBe(130);
    expect(got[0].lastMs).toBe(150);
  });

  it("keeps 'none yet' apart from a time: a stream not started reads back with no first or last chunk", () => {
    const s = open("h1", 995, 16, 0);
    s.lastMs = 0;
    const line = streamLine(s, 1000);
    expect(line).toBe("h1 6 20 16 300 0 0 0 0");
    const into = new Map<string, SiblingStream[]>();
    expect(parseRecord(rec("b 1000\n" + line), "a", 1000, into)).toBe(1000);
    expect(into.get("h1")[0].pickedMs).toBe(995);
    expect(into.get("h1")[0].firstMs).toBe(0);
    expect(into.get("h1")[0].lastMs).toBe(0);
    // A time at the publish itself is age 0, written 1: not "none".
    expect(ageOf(1000, 1000)).toBe(1);
    expect(ageOf(0, 1000)).toBe(0);
  });

  it("carries a streaming request's predicted TTFT, so a sibling sees how far behind the host runs", () => {
    const s = open("h1", 900, 16, 0);
    s.lastMs = 0;
    s.streaming = true;
    const line = streamLine(s, 1000);
    expect(line).toBe("h1 101 20 16 300 0 0 0 0 21"); // due: the predicted TTFT (20) + 1
    const into = new Map<string, SiblingStream[]>();
    expect(parseRecord(rec("b 1000\n" + line), "a", 1000, into)).toBe(1000);
    expect(into.get("h1")[0].dueTtft).toBe(20);
    // Picked at 900 with 20 ms predicted, no first chunk at 1000: 80 ms behind, for any VM.
    expect(new OpenStreams().overdue("h1", 1000, into.get("h1"))).toBe(80);
    // Started, or not streamed (its first chunk is its end): no due field, the line of before.
    s.firstMs = 990;
    expect(streamLine(s, 1000)).toBe("h1 101 20 16 300 11 0 0 0");
    s.firstMs = 0;
    s.streaming = false;
    expect(streamLine(s, 1000)).toBe("h1 101 20 16 300 0 0 0 0");
    const old = new Map<string, SiblingStream[]>();
    expect(parseRecord(rec("b 1000\nh1 101 20 16 300 0 0 0 0\nh2 101 20 16 300 0 0 0 0 0"), "a", 1000, old)).toBe(1000);
    expect(old.get("h1")[0].dueTtft).toBe(-1);
    expect(old.get("h2")[0].dueTtft).toBe(-1);
    expect(new OpenStreams().overdue("h1", 1000, old.get("h1"))).toBe(0);
  });

  it("reads ends and held requests, skips lines that do not parse", () => {
    const into = new Map<string, SiblingStream[]>();
    const ends = new Map<string, f64[]>();
    const held = new SiblingHolds();
    // ~h1 101 11: picked at 900, ended at 990 (ages + 1 at 1000); held deadlines as they are.
    const text = "b 1000\nh1 1 2 3 4 5 6 7\n~h1 101 11\n^h2 1500\n^h1 1200\nh1 1 2 3\nh1 1 -2 3 4 5 6 7\nh1 x 2 3 4 5 6 7\n~h1 9\n^h3 nope\n";
    expect(parseRecord(rec(text), "a", 1000, into, ends, held)).toBe(1000);
    expect(into.get("h1").length).toBe(1);
    expect(ends.get("h1")).toStrictEqual([900.0, 990.0]);
    expect(held.length).toBe(2);
    expect(held.hosts).toStrictEqual(["h1", "h2"]); // by deadline, not by line
    expect(held.deadlines).toStrictEqual([1200.0, 1500.0]);
  });

  it("lists a sibling that holds requests (its head's third field), for the wake", () => {
    const into = new Map<string, SiblingStream[]>();
    const holding = new Array<string>(0);
    expect(parseRecord(rec("b 1000 1"), "a", 1000, into, null, null, null, holding)).toBe(1000);
    expect(parseRecord(rec("c 1000 0"), "a", 1000, into, null, null, null, holding)).toBe(1000);
    expect(parseRecord(rec("d 1000"), "a", 1000, into, null, null, null, holding)).toBe(1000);
    expect(holding).toStrictEqual(["b"]);
  });

  it("ignores this VM's own record, a stale one and a malformed head", () => {
    const into = new Map<string, SiblingStream[]>();
    expect(parseRecord(rec("a 1000\nh1 1 2 3 4 5 6 7"), "a", 1000, into)).toBe(-1);
    expect(parseRecord(rec("b 1000\nh1 1 2 3 4 5 6 7"), "a", 1000 + SIB_STALE_MS + 1, into)).toBe(-1);
    expect(parseRecord(rec("b\nh1 1 2 3 4 5 6 7"), "a", 1000, into)).toBe(-1);
    expect(parseRecord(rec(""), "a", 1000, into)).toBe(-1);
    expect(into.size).toBe(0);
    expect(parseRecord(rec("b 1000"), "a", 1000 + SIB_STALE_MS, into)).toBe(1000); // no streams: still a live VM
  });

  it("keeps held requests in deadline order, FIFO among equal deadlines", () => {
    const h = new SiblingHolds();
    h.add("x", 300, null);
    h.add("y", 100, null);
    h.add("z", 300, null);
    h.add("w", 200, null);
    expect(h.hosts).toStrictEqual(["y", "w", "x", "z"]);
  });
});

describe("reads of the siblings' records", () => {
  it("come at most every ms for small records, less often the larger they were", () => {
    expect(readInterval(0)).toBe(1);
    expect(readInterval(2000)).toBe(1);
    // 1,000 streams open (~40 bytes a line, ~40 KB): a read every ~10 ms.
    expect(readInterval(40000)).toBeCloseTo(40000 / READ_BYTES_PER_MS, 6);
    expect(readInterval(40000)).toBeGreaterThan(9);
  });
});

describe("the maps of a read", () => {
  it("lose the hosts no record lists any more (pods come and go)", () => {
    const m = new Map<string, f64[]>();
    m.set("gone", []);
    m.set("here", [1.0, 2.0]);
    dropEmpty<f64>(m);
    expect(m.has("gone")).toBe(false);
    expect(m.get("here").length).toBe(2);
  });
});

describe("netSince", () => {
  it("adds streams picked after the read, takes off those it counted that ended since", () => {
    const streams = [sib(90, 16, 95), sib(110, 16, 0)];
    // ends: picked 50 ended 120 (counted, gone: -1); picked 105 ended 115 (never counted: 0);
    // picked 40 ended 80 (gone before the read: 0).
    const ends: f64[] = [50, 120, 105, 115, 40, 80];
    expect(netSince(streams, ends, 100)).toBe(0); // +1 (picked 110) - 1
    expect(netSince(streams, null, 100)).toBe(1);
    expect(netSince(null, ends, 100)).toBe(-1);
    expect(netSince(null, null, 100)).toBe(0);
  });
});

describe("OpenStreams with a sibling's streams", () => {
  it("schedules a sibling's started stream by its progress, not as an average stream", () => {
    const o = new OpenStreams();
    // One slot, a sibling's stream started at 100 (first token) of 16 at 10 ms: at 200, 11 done, 5 left.
    const s = [sib(80, 16, 100)];
    expect(o.computeWait("a", 0, 1, 1, 10, 20, 128, 200, s)).toBeCloseTo(50, 6);
    // Without it the fleet's one stream is an average one: (20 + 127 x 10) / 2.
    expect(o.computeWait("a", 0, 1, 1, 10, 20, 128, 200)).toBeCloseTo(645, 6);
    expect(o.waitFor("a", 1, 1, 10, 20, 128, 200, s, 1)).toBeCloseTo(50, 6);
  });

  it("keeps at most what the fleet's count leaves of a sibling's started streams, the longest first", () => {
    const o = new OpenStreams();
    // Two started sibling streams, 50 and 150 ms left; the count shows one: the one nearest its
    // end most likely ended since the record.
    const s = [sib(80, 16, 100), sib(80, 26, 100)];
    expect(o.computeWait("a", 0, 1, 1, 10, 20, 128, 200, s)).toBeCloseTo(150, 6);
    // The count shows three: both, and one average stream of another gateway, on two slots.
    expect(o.computeWait("a", 0, 3, 2, 10, 20, 128, 200, s)).toBeCloseTo(150, 6);
  });

  it("counts a sibling's stream not started yet even before the fleet's count shows it", () => {
    const o = new OpenStreams();
    // One slot, the count shows nothing yet: the sibling's pending stream (picked at 195, prefill
    // 20, 16 tokens) takes the slot: 15 + 150 ms.
    const s = [sib(195, 16, 0)];
    expect(o.waitFor("a", 0, 1, 10, 20, 128, 200, s, 1)).toBeCloseTo(165, 6);
    expect(o.prefillAhead("a", 200, [new SiblingStream(195, 20, 16, 700, 0, 0, 0)], 2)).toBe(700);
  });
});
