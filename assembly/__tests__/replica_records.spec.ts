// Other gateways' records (policy/predicted_latency/replica_records.ts and parseRecord's shift):
// a record's times move onto this VM's clock by Redis's, its staleness is judged after the move,
// a malformed record in a reply is skipped, a failed reply keeps the last records; the blob the
// Envoy's other VMs read them from. (No shared data here: the claim is through the facade,
// test/plugin/slo-replicas.test.ts.)
import { SiblingStream } from "../policy/predicted_latency/open_streams";
import { parseRecord, SIB_STALE_MS, SiblingHolds } from "../policy/predicted_latency/sibling_streams";
import { RecordWriter } from "../policy/predicted_latency/record_bytes";
import { BYTES_PER_MS, claimLapsed, DISCOVERY_MS, EnvoyRecords, exchangeInterval, MAX_INTERVAL_MS, MAX_STORE, parseBlob, ReplicaRecords, writeBlob } from "../policy/predicted_latency/replica_records";
import { parseResp, RespValue } from "../redis/resp";
import { Pool } from "../services/lease/pool";
import { LbConfig } from "../config/lb_config";
import { RedisClient } from "../redis/client";

function rec(text: string): ArrayBuffer { return String.UTF8.encode(text); }

/** This VM's clock when a reply comes (ms). */
function replyAt(): f64 { return 10_010; }

function records(): ReplicaRecords {
  const pool = new Pool(new LbConfig(), new RedisClient("redis", "", "", 1000, 3, 1000), "r", "c");
  return new ReplicaRecords(pool, "me", 20, SIB_STALE_MS, null, replyAt);
}

/** This Envoy's records: this VM's alone. */
function mine(): EnvoyRecords {
  const m = new EnvoyRecords();
  m.add("me", 0, rec("me 0 0"));
  return m;
}

/** A RESP array of bulk strings. */
function reply(items: string[]): RespValue {
  let s = "*" + items.length.toString() + "\r\n";
  for (let i = 0; i < items.length; i++) s += "$" + String.UTF8.byteLength(items[i]).toString() + "\r\n" + items[i] + "\r\n";
  return parseResp(Uint8Array.wrap(String.UTF8.encode(s))).value!;
}

describe("another gateway's record", () => {
  it("moves every time of the record by the shift: streams, ends, held deadlines", () => {
    const into = new Map<string, SiblingStream[]>();
    const ends = new Map<string, f64[]>();
    const held = new SiblingHolds();
    // Published at 1000 on its writer's clock, which is 5,000 ms behind this VM's.
    const text = "b 1000\nh1 101 20 16 0 51 41 3 20\n~h1 201 11\n^h2 1500";
    expect(parseRecord(rec(text), "a", 6100, into, ends, held, null, null, null, 5000)).toBe(6000);
    const s = into.get("h1")[0];
    expect(s.pickedMs).toBe(5900);
    expect(s.firstMs).toBe(5950);
    expect(s.lastMs).toBe(5960);
    expect(s.sloTpot).toBe(20);
    expect(ends.get("h1")).toStrictEqual([5800.0, 5990.0]);
    expect(held.deadlines).toStrictEqual([6500.0]);
  });

  it("is stale by this VM's clock after the shift, not by its writer's", () => {
    const into = new Map<string, SiblingStream[]>();
    // Fresh by its own time (1000 at 1000), but 2 s old once moved.
    expect(parseRecord(rec("b 1000\nh1 1 2 3 4 5 6 7"), "a", 1000, into, null, null, null, null, null, -2000)).toBe(-1);
    // Old by its own time, fresh once moved.
    expect(parseRecord(rec("b 1000\nh1 1 2 3 4 5 6 7"), "a", 50_000, into, null, null, null, null, null, 49_000)).toBe(50_000);
  });
});

describe("ReplicaRecords", () => {
  it("takes each record's shift from Redis's times: stored now - stored ms before the middle of the round trip", () => {
    const r = records();
    // Sent at 10,000, answered at 10,010 (replyAt): Redis ran it about at 10,005 here, its clock then
    // 900,000; b's record was stored 30 ms before, c's 500 ms before.
    r.onReply(true, reply(["900000", "899970", "b 123\nh1 1 20 16 0 0 0 0 20", "899500", "c 77"]), 10_000);
    expect(r.version).toBe(1);
    expect(r.tags).toStrictEqual(["b", "c"]);
    expect(r.shifts).toStrictEqual([9975.0 - 123.0, 9505.0 - 77.0]);
    expect(String.UTF8.decode(r.values[0])).toBe("b 123\nh1 1 20 16 0 0 0 0 20");
  });

  it("skips a malformed record and keeps the last records when a call fails", () => {
    const r = records();
    r.onReply(true, reply(["900000", "899970", "b 123", "x", "c 77", "899990", "no-time"]), 10_000);
    expect(r.tags).toStrictEqual(["b"]);
    r.onReply(false, null, 10_000);
    r.onReply(true, parseResp(Uint8Array.wrap(String.UTF8.encode("-ERR llmlb: tag must not be empty\r\n"))).value, 10_000);
    expect(r.tags).toStrictEqual(["b"]);
    expect(r.version).toBe(1);
  });

  it("is due everyMs after the last send", () => {
    const r = records();
    expect(r.due(0)).toBe(true);
    r.send(mine(), 100); // no Redis here: nothing goes out, the period still counts
    expect(r.due(119)).toBe(false);
    expect(r.due(120)).toBe(true);
  });

  it("waits DISCOVERY_MS while it sees no other gateway, longer than everyMs when the bytes would pass the budget", () => {
    expect(exchangeInterval(20, 100, 0)).toBe(DISCOVERY_MS);
    expect(exchangeInterval(20, 2000, 2)).toBe(20.0);
    expect(exchangeInterval(20, BYTES_PER_MS * 300, 7)).toBe(300.0);
    expect(exchangeInterval(1000, 100, 0)).toBe(1000.0);
    expect(exchangeInterval(20, BYTES_PER_MS * 1e6, 7)).toBe(MAX_INTERVAL_MS);
  });

  it("a first reply showing another gateway makes an exchange due at once (this VM's record was its head alone)", () => {
    const r = records();
    r.onReply(true, reply(["900000"]), 10_000);
    expect(r.appeared).toBe(false);
    expect(r.intervalMs).toBe(DISCOVERY_MS);
    r.send(mine(), 10_000);
    expect(r.due(10_100)).toBe(false);
    r.onReply(true, reply(["900000", "899970", "b 123"]), 10_000);
    expect(r.appeared).toBe(true);
    expect(r.due(10_011)).toBe(true);
    expect(r.intervalMs).toBe(20.0);
  });
});

describe("this Envoy's records and the blob", () => {
  it("an exchange sends each record once, with its age rounded and never negative, at most MAX_STORE", () => {
    const m = new EnvoyRecords();
    m.add("a", 12.4, rec("a 1 0"));
    m.add("a", 0, rec("a 2 0"));
    m.add("b", -3, rec("b 1 0"));
    expect(m.tags).toStrictEqual(["a", "b"]);
    expect(m.ages).toStrictEqual([12.0, 0.0]);
    for (let i = 0; i < 100; i++) m.add("t" + i.toString(), 0, rec("x 1 0"));
    expect(m.tags.length).toBe(MAX_STORE);
  });

  it("reads records with their publish times, stopping at a malformed entry", () => {
    const values = new Array<ArrayBuffer>(0);
    const at = new Array<f64>(0);
    parseBlob(rec("5000 5\nb 1 0\n6000 14\nc 2 0\nh1 1 2 3\n7000 99\nshort"), values, at);
    expect(at).toStrictEqual([5000.0, 6000.0]);
    expect(String.UTF8.decode(values[1])).toBe("c 2 0\nh1 1 2 3");
    const none = new Array<ArrayBuffer>(0);
    parseBlob(rec("-5 3\nabc\n"), none, at);
    expect(none.length).toBe(0);
  });

  it("reads back what writeBlob wrote", () => {
    const blob = writeBlob(new RecordWriter(), [rec("b 1 0"), rec("c 2 0\nh1 1 2 3")], [5000, 6000]);
    expect(String.UTF8.decode(blob)).toBe("5000 5\nb 1 0\n6000 14\nc 2 0\nh1 1 2 3\n");
    const values = new Array<ArrayBuffer>(0);
    const at = new Array<f64>(0);
    parseBlob(blob, values, at);
    expect(at).toStrictEqual([5000.0, 6000.0]);
    expect(String.UTF8.decode(values[1])).toBe("c 2 0\nh1 1 2 3");
  });
});

describe("the exchange claim", () => {
  it("holds until its time, unless unreadable or further ahead than any period and hold", () => {
    expect(claimLapsed("1000", 999, 2000)).toBe(false);
    expect(claimLapsed("1000", 1000, 2000)).toBe(true);
    expect(claimLapsed("junk", 0, 2000)).toBe(true);
    // a clock stepped back: the claim lies past hold + MAX_INTERVAL_MS and no longer holds
    expect(claimLapsed((1000 + 2000 + MAX_INTERVAL_MS).toString(), 1000, 2000)).toBe(false);
    expect(claimLapsed((1001 + 2000 + MAX_INTERVAL_MS).toString(), 1000, 2000)).toBe(true);
  });
});
