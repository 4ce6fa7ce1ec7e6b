// predicted_latency's prefill interference (sloInterference): the streams a request's prefill
// would make miss their TPOT SLO (OpenStreams.harm, this VM's and its siblings'), the choice that
// avoids them within the TPOT-fit band, and the TPOT SLO in a sibling record's stream line.
import { OpenStream, OpenStreams, SiblingStream } from "../policy/predicted_latency/open_streams";
import { chooseBySlo, Draws, PICK_BEST_FIT, PICK_TPOT_FIT } from "../policy/predicted_latency/choose";
import { parseRecord, writeStreamLine } from "../policy/predicted_latency/sibling_streams";
import { RecordWriter } from "../policy/predicted_latency/record_bytes";

const NO_EXPLORE = new Draws(0.99, 0);
const ALL4: bool[] = [true, true, true, true];

/** A stream of 16 tokens on `host` with TPOT SLO `slo`, first chunk at `first` (0: not started). */
function stream(host: string, slo: f64, first: f64): OpenStream {
  const s = new OpenStream(host, 90, 16, 0, 0, 0, 10, 10, 10, 0, slo);
  s.firstMs = first;
  s.lastMs = first;
  return s;
}

describe("OpenStreams.harm", () => {
  it("counts the streams a stall makes miss their TPOT SLO: on time now, by less than the stall", () => {
    const o = new OpenStreams();
    // At 200, started at 100, 10 ms a token: 11 of 16 done, 50 ms left, 100 spent; SLO 20 x 15
    // gaps = 300: 150 ms of slack.
    o.add(stream("a", 20, 100));
    expect(o.harm("a", 149, 10, 200)).toBe(0);
    expect(o.harm("a", 151, 10, 200)).toBe(1);
    // Already late (SLO 8: 120 ms for 150), no SLO, another host: never counted.
    o.add(stream("a", 8, 100));
    o.add(stream("a", 0, 100));
    expect(o.harm("a", 1000, 10, 200)).toBe(1);
    expect(o.harm("b", 1000, 10, 200)).toBe(0);
    // No stall (a prompt all cached) harms nobody.
    expect(o.harm("a", 0, 10, 200)).toBe(0);
  });

  it("a stream not started counts whole from now, and the slower the host the less slack", () => {
    const o = new OpenStreams();
    o.add(stream("a", 20, 0)); // 15 gaps: 300 - 150 = 150 ms of slack at 10 ms a token
    expect(o.harm("a", 151, 10, 500)).toBe(1);
    expect(o.harm("a", 149, 10, 500)).toBe(0);
    expect(o.harm("a", 80, 15, 500)).toBe(1); // 300 - 225 = 75
  });

  it("counts a sibling's streams too, by their record's progress", () => {
    const o = new OpenStreams();
    // Started at 100, one event seen at 100: at 200 as the stream above, 150 ms of slack.
    const sib = [new SiblingStream(90, 10, 16, 0, 100, 100, 1, 20), new SiblingStream(90, 10, 16, 0, 100, 100, 1, 0)];
    expect(o.harm("a", 151, 10, 200, sib)).toBe(1);
    o.add(stream("a", 20, 100));
    expect(o.harm("a", 151, 10, 200, sib)).toBe(2);
    expect(o.harm("a", 149, 10, 200, sib)).toBe(0);
  });
});

// Hosts 0 and 2 slow (TPOT 14-15), 1 and 3 fast (8); host 3's slot frees first.
const ttft: f64[] = [300, 60, 120, 40];
const tpot: f64[] = [15, 8, 14, 8.2];

describe("the choice with harm", () => {
  it("tpot_fit: within the band, the host whose streams the prefill harms least, then the least TTFT", () => {
    expect(chooseBySlo(ttft, tpot, ALL4, 150, 11, PICK_TPOT_FIT, 0, false, 0, NO_EXPLORE, [0, 0, 0, 0]).index).toBe(3);
    expect(chooseBySlo(ttft, tpot, ALL4, 150, 11, PICK_TPOT_FIT, 0, false, 0, NO_EXPLORE, [0, 2, 0, 3]).index).toBe(1);
    expect(chooseBySlo(ttft, tpot, ALL4, 150, 11, PICK_TPOT_FIT, 0, false, 0, NO_EXPLORE, [0, 1, 0, 1]).index).toBe(3);
  });
  it("says when the harm moved the choice off the pod of least TTFT (the avoided counter)", () => {
    expect(chooseBySlo(ttft, tpot, ALL4, 150, 11, PICK_TPOT_FIT, 0, false, 0, NO_EXPLORE, [0, 2, 0, 3]).avoided).toBe(true);
    expect(chooseBySlo(ttft, tpot, ALL4, 150, 11, PICK_TPOT_FIT, 0, false, 0, NO_EXPLORE, [0, 1, 0, 1]).avoided).toBe(false);
    expect(chooseBySlo(ttft, tpot, ALL4, 150, 11, PICK_TPOT_FIT, 0, false, 0, NO_EXPLORE).avoided).toBe(false);
  });
  it("never leaves the band for less harm (a loose request stays on the slow hosts)", () => {
    expect(chooseBySlo(ttft, tpot, ALL4, 600, 30, PICK_TPOT_FIT, 0, false, 0, NO_EXPLORE, [2, 0, 1, 0]).index).toBe(2);
    expect(chooseBySlo(ttft, tpot, ALL4, 600, 30, PICK_TPOT_FIT, 0, false, 0, NO_EXPLORE, [1, 0, 1, 0]).index).toBe(2);
  });
  it("without an SLO: the least harm among the hosts within 10% of the lowest latency score", () => {
    // Scores (ttft + tpot x 100 tokens): 1800, 860, 1520, 860.
    expect(chooseBySlo(ttft, tpot, ALL4, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, [0, 1, 0, 2]).index).toBe(1);
    expect(chooseBySlo(ttft, tpot, ALL4, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, [0, 2, 0, 1]).index).toBe(3);
    // A tie broken by the harm: avoided when the draw's pick would have harmed more.
    expect(chooseBySlo(ttft, tpot, ALL4, 0, 0, PICK_TPOT_FIT, 0, false, 100, new Draws(0.99, 0), [0, 2, 0, 1]).avoided
      || chooseBySlo(ttft, tpot, ALL4, 0, 0, PICK_TPOT_FIT, 0, false, 100, new Draws(0.99, 1), [0, 2, 0, 1]).avoided).toBe(true);
    expect(chooseBySlo(ttft, tpot, ALL4, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, [0, 0, 0, 0]).avoided).toBe(false);
    // The slow hosts harm nobody but are far slower: not for a best-effort request.
    expect(chooseBySlo(ttft, tpot, ALL4, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, [0, 2, 0, 2]).index).not.toBe(0);
    expect(chooseBySlo(ttft, tpot, ALL4, 0, 0, PICK_TPOT_FIT, 0, false, 100, NO_EXPLORE, [0, 2, 0, 2]).index).not.toBe(2);
  });
  it("other modes ignore it", () => {
    expect(chooseBySlo(ttft, tpot, ALL4, 600, 30, PICK_BEST_FIT, 0, false, 0, NO_EXPLORE, [9, 0, 0, 0]).index).toBe(0);
  });
});

describe("a sibling record's stream line with its TPOT SLO", () => {
  it("writes the SLO before the due field and reads it back; a line of 7 fields (an older version's) reads as none", () => {
    const w = new RecordWriter();
    writeStreamLine(w, stream("h1", 20, 130), 200);
    const line = String.UTF8.decode(w.bytes());
    expect(line).toBe("h1 111 10 16 0 71 71 0 20");
    const into = new Map<string, SiblingStream[]>();
    expect(parseRecord(String.UTF8.encode("b 200\n" + line + "\nh2 1 2 3 4 5 6 7\nh3 1 2 3 4 5 6 7 -1\nh4 1 2 3 4 5 6 7 8 9 10"), "a", 250, into)).toBe(200);
    expect(into.get("h1")[0].sloTpot).toBe(20);
    expect(into.get("h2")[0].sloTpot).toBe(0);
    expect(into.has("h3")).toBe(false);
    expect(into.has("h4")).toBe(false);
  });
});
