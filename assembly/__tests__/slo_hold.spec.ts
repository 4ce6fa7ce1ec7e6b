// Late binding's held requests (policy/predicted_latency/hold.ts): deadline order, FIFO among
// equal deadlines, no deadline last; the plan (held requests ahead of a deadline, by host).
import { HeldRequest, HoldList } from "../policy/predicted_latency/hold";
import { PickReads } from "../policy/predicted_latency/pick_reads";
import { Draws } from "../policy/predicted_latency/choose";
import { RequestTerms } from "../policy/predicted_latency/evaluation";
import { LbConfig } from "../config/lb_config";
import { LbRequest, StreamPort } from "../services/request/request";
import { Verdict } from "../services/request/verdict";
import { CandidateSet } from "../services/candidates/candidates";
import { CandidateSource } from "../services/candidates/source";

class NoPort extends StreamPort {
  alive(): bool { return true; }
  enterAsync(): bool { return true; }
  finishAsync(_v: Verdict): void {}
  resumeWith(_h: string, _reason: string, _load: string): void {}
  resumePass(): void {}
  resumeShed(_load: string): void {}
  admitted(): void {}
  shed(_load: string): void {}
}

const source = new CandidateSource();

function held(sinceMs: f64, sloTtft: f64, host: string = "", late: bool = false): HeldRequest {
  const h = new HeldRequest(new LbRequest(new LbConfig(), new NoPort(), source), new CandidateSet([], ""), new PickReads([], null), sinceMs, new RequestTerms(sloTtft, 0, 0, 16, new Draws(0.5, 0)));
  h.host = host;
  h.late = late;
  return h;
}

describe("HoldList", () => {
  it("keeps deadline order, FIFO among equal deadlines, requests without a TTFT SLO last", () => {
    const list = new HoldList();
    const loose = held(0, 600);
    const none = held(1, 0);
    const tight = held(10, 150);
    const tight2 = held(10, 150);
    const early = held(5, 100);
    list.add(loose);
    list.add(none);
    list.add(tight);
    list.add(tight2);
    list.add(early);
    expect(list.length).toBe(5);
    expect(list.entries[0]).toBe(early); // deadline 105
    expect(list.entries[1]).toBe(tight); // 160, first of two
    expect(list.entries[2]).toBe(tight2);
    expect(list.entries[3]).toBe(loose); // 600
    expect(list.entries[4]).toBe(none); // no deadline
    expect(list.indexOf(loose.r)).toBe(3);
    list.removeAt(0);
    expect(list.indexOf(loose.r)).toBe(2);
    expect(list.indexOf(early.r)).toBe(-1);
  });

  it("counts the on-time held requests ahead of a deadline by the host they wait for", () => {
    const list = new HoldList();
    list.add(held(0, 100, "a"));
    list.add(held(0, 120, "a"));
    list.add(held(0, 130, "b"));
    list.add(held(0, 140, "b", true)); // late: yields, not ahead of anyone
    list.add(held(0, 500, "a")); // later deadline: behind
    const ahead = list.aheadOf(200);
    expect(ahead.get("a")).toBe(2);
    expect(ahead.get("b")).toBe(1);
    expect(list.aheadOf(50).size).toBe(0);
    expect(list.aheadOf(Infinity).get("a")).toBe(3);
  });

  it("changes its version when an entry comes or goes (the sibling records are written again then)", () => {
    const list = new HoldList();
    const v0 = list.version;
    list.add(held(0, 100, "a"));
    expect(list.version).not.toBe(v0);
    const v1 = list.version;
    expect(list.aheadOf(1000).get("a")).toBe(1); // reading changes nothing
    expect(list.version).toBe(v1);
    list.removeAt(0);
    expect(list.version).not.toBe(v1);
  });
});
