// predicted_latency's reads before a pick (pick_reads.ts): the counts of a ZMSCORE reply, and the
// join that runs the pick once, when every part sent has answered.
import { PickReads, PickReadsDone, zmscoreCounts, zmscoreStamps } from "../policy/predicted_latency/pick_reads";
import { RespKind, RespValue } from "../redis/resp";
import { PoolInflight } from "../services/metrics_view/inflight";
import { Pool } from "../services/lease/pool";
import { LbConfig } from "../config/lb_config";
import { RedisClient } from "../redis/client";

function bulk(s: string): RespValue {
  const v = new RespValue(RespKind.BulkString);
  v.str = s;
  return v;
}

function array(items: RespValue[]): RespValue {
  const v = new RespValue(RespKind.Array);
  v.items = items;
  return v;
}

class Count extends PickReadsDone {
  calls: i32 = 0;
  onReads(reads: PickReads): void { this.calls++; }
}

describe("zmscoreCounts", () => {
  it("reads one count per host; a host missing from the pool's load counts 0", () => {
    const c = zmscoreCounts(true, array([bulk("3"), new RespValue(RespKind.NullBulk), bulk("1.5")]), 3)!;
    expect(c.length).toBe(3);
    expect(c[0]).toBe(3);
    expect(c[1]).toBe(0);
    expect(c[2]).toBe(1.5);
  });
  it("refuses a failed call, an error, another length; a malformed count is 0", () => {
    expect(zmscoreCounts(false, null, 1)).toBeNull();
    expect(zmscoreCounts(true, new RespValue(RespKind.Error), 1)).toBeNull();
    expect(zmscoreCounts(true, array([bulk("1")]), 2)).toBeNull();
    expect(zmscoreCounts(true, array([bulk("x"), bulk("-2")]), 2)![0]).toBe(0);
    expect(zmscoreCounts(true, array([bulk("x"), bulk("-2")]), 2)![1]).toBe(0);
  });
});

describe("zmscoreStamps", () => {
  it("reads one stamp per host; a host never stamped, or a value that is not a number, is -1 (the oldest)", () => {
    const t = zmscoreStamps(true, array([bulk("1700000000123.456"), new RespValue(RespKind.NullBulk), bulk("x"), bulk("inf")]), 4)!;
    expect(t[0]).toBe(1700000000123.456);
    expect(t[1]).toBe(-1);
    expect(t[2]).toBe(-1);
    expect(t[3]).toBe(-1);
  });
  it("refuses a failed call, an error, another length", () => {
    expect(zmscoreStamps(false, null, 1)).toBeNull();
    expect(zmscoreStamps(true, new RespValue(RespKind.Error), 1)).toBeNull();
    expect(zmscoreStamps(true, array([bulk("1")]), 2)).toBeNull();
  });
});

describe("PickReads", () => {
  it("runs the pick once, when the last part sent has answered", () => {
    const done = new Count();
    const reads = new PickReads(["k1", "k2"], done);
    reads.netAtSend = [0, 0];
    reads.expect();
    reads.expect();
    reads.onCounts(true, array([bulk("2"), bulk("0")]));
    expect(done.calls).toBe(0);
    expect(reads.pending).toBe(true);
    reads.onPrefix(true, array([bulk("h1"), new RespValue(RespKind.NullBulk)]));
    expect(done.calls).toBe(1);
    expect(reads.pending).toBe(false);
    expect(reads.counts![0]).toBe(2);
    expect(reads.values[0]).toBe("h1");
    expect(reads.values[1]).toBe("");
  });
  it("the stamps are a third part: the pick waits for them, a second answer is ignored", () => {
    const done = new Count();
    const reads = new PickReads([], done);
    reads.netAtSend = [0, 0];
    reads.expect();
    reads.expect();
    reads.onCounts(true, array([bulk("1"), bulk("1")]));
    expect(done.calls).toBe(0);
    reads.onStamps(true, array([bulk("20"), bulk("10")]));
    reads.onStamps(true, array([bulk("1"), bulk("2")]));
    expect(done.calls).toBe(1);
    expect(reads.stamps![0]).toBe(20);
    expect(reads.stamps![1]).toBe(10);
  });
  it("a part that could not be sent is not waited for; a failed part leaves its answer empty", () => {
    const done = new Count();
    const reads = new PickReads([], done);
    reads.netAtSend = [0];
    reads.expect();
    reads.cancel();
    expect(reads.pending).toBe(false);
    reads.expect();
    reads.onCounts(false, null);
    expect(done.calls).toBe(1);
    expect(reads.counts).toBeNull();
  });
  it("a reply after the part's deadline (answered as failed) is ignored", () => {
    const done = new Count();
    const reads = new PickReads(["k"], done);
    reads.netAtSend = [0];
    reads.expect();
    reads.expect();
    reads.onPrefix(false, null); // the deadline
    reads.onPrefix(true, array([bulk("late")]));
    expect(done.calls).toBe(0);
    reads.onCounts(true, array([bulk("1")]));
    reads.onCounts(true, array([bulk("9")]));
    expect(done.calls).toBe(1);
    expect(reads.values[0]).toBe("");
    expect(reads.counts![0]).toBe(1);
  });
});

describe("counts Redis sent, corrupt", () => {
  it("inf, nan or a negative count is 0 in a pick's read and in the periodic read alike", () => {
    const c = zmscoreCounts(true, array([bulk("inf"), bulk("nan"), bulk("-2"), bulk("4")]), 4)!;
    expect(c).toStrictEqual([0.0, 0.0, 0.0, 4.0]);
    const p = new PoolInflight(new Pool(new LbConfig(), new RedisClient("redis", "", "", 1000, 3, 1000), "r", "c"));
    p.onChunk(true, array([bulk("h1"), bulk("inf"), bulk("h2"), bulk("-2"), bulk("h3"), bulk("4")]));
    expect(p.count("h1")).toBe(0.0);
    expect(p.count("h2")).toBe(0.0);
    expect(p.count("h3")).toBe(4.0);
  });
});
