// The in-flight tracker's net counts (inflight.ts): this VM's picks minus its ends per host, read
// twice around a Redis read to correct it, and pruned when hosts come and go; a pick's count taken
// back once, from where it is still counted (Redis down, a read out, a read answered).
import { InflightTracker, PoolInflight } from "../services/metrics_view/inflight";
import { Pool } from "../services/lease/pool";
import { LbConfig } from "../config/lb_config";
import { RedisClient } from "../redis/client";
import { LocalLeastRequest } from "../services/candidates/local_least";
import { CandidateSet } from "../services/candidates/candidates";

function pool(): Pool {
  return new Pool(new LbConfig(), new RedisClient("redis", "", "", 1000, 3, 1000), "r", "c");
}

/** A pick on "a", then a read of the counts sent and out; returns the reads sent before the pick. */
function pickWithReadOut(p: PoolInflight): i64 {
  const at = p.readsSent;
  p.picked("a", 1);
  p.startRead();
  p.reading = true;
  return at;
}

describe("InflightTracker net counts", () => {
  it("a read's count plus this VM's picks and ends since it was sent", () => {
    const t = new InflightTracker();
    const p = pool();
    t.notePick(p, "a", 1);
    const atSend = t.net(p, "a");
    expect(atSend).toBe(1);
    // While the read is out: one more pick, one end.
    t.notePick(p, "a", 1);
    t.takeBack(t.notePick(p, "a", 1), true);
    const local = new LocalLeastRequest();
    // Redis counted 5 when it answered (this VM's first pick included).
    expect(t.inflightFromRead(p, "a", 5, atSend, local)).toBe(6);
    // Never below 0 (a read older than the ends it is corrected by).
    expect(t.inflightFromRead(p, "a", 0, 10, local)).toBe(0);
  });

  it("takes a pick back once, whatever its lease, while no read answers", () => {
    const t = new InflightTracker();
    const p = pool();
    t.remember(p, new CandidateSet(["a"], ""));
    const local = new LocalLeastRequest();
    const leased = t.notePick(p, "a", 1);
    const refused = t.notePick(p, "a", 1);
    const fellBack = t.notePick(p, "a", 2);
    expect(t.inflight(p, "a", local)).toBe(4);
    // Its lease is local: the local counts hold it from now on (not both).
    t.takeBack(fellBack, false);
    local.acquire("a", 2);
    expect(t.inflight(p, "a", local)).toBe(4);
    // Reads fail (the specs have no host: Redis is down); they fold the picks back.
    t.tick(1000, 200);
    t.tick(2000, 200);
    expect(t.inflight(p, "a", local)).toBe(4);
    t.takeBack(refused, false);
    t.takeBack(refused, false);
    t.takeBack(leased, true);
    t.takeBack(fellBack, false);
    expect(t.inflight(p, "a", local)).toBe(2);
    local.release("a", 2);
    expect(t.inflight(p, "a", local)).toBe(0);
    expect(t.net(p, "a")).toBe(0);
  });

  it("a pick no read counted comes off where it is still counted", () => {
    const p = new PoolInflight(pool());
    // One pick kept open; each other one comes off with no lease in Redis (a local lease, a shed).
    p.picked("a", 1);
    // No read sent since the pick: off `since`.
    let at = p.readsSent;
    p.picked("a", 1);
    p.unpicked("a", 1, at, false);
    expect(p.count("a")).toBe(1);
    // A read out since: off its batch (the picks fold back if it fails).
    at = pickWithReadOut(p);
    p.unpicked("a", 1, at, false);
    expect(p.count("a")).toBe(1);
    p.onRead(false);
    expect(p.count("a")).toBe(1);
    // Sent before a read that failed: off `since` again.
    at = p.readsSent;
    p.picked("a", 1);
    p.startRead();
    p.onRead(false);
    p.unpicked("a", 1, at, false);
    expect(p.count("a")).toBe(1);
    // A read sent after the pick answered (Redis counted 1: the open one, leased there): its counts
    // replaced the pick's.
    at = pickWithReadOut(p);
    p.onRead(true);
    p.fleet.set("a", 1);
    p.unpicked("a", 1, at, false);
    expect(p.count("a")).toBe(1);
    // The open one ends: its lease was in Redis.
    p.unpicked("a", 1, 0, true);
    expect(p.count("a")).toBe(0);
    expect(p.net.get("a")).toBe(0);
  });

  it("drops the net counts of hosts that left once they outnumber the candidates twice", () => {
    const p = new PoolInflight(pool());
    p.hosts = ["a", "b"];
    for (let i = 0; i < 40; i++) p.net.set("old" + i.toString(), 1);
    p.net.set("a", 2);
    p.pruneNet();
    expect(p.net.size).toBe(1);
    expect(p.net.get("a")).toBe(2);
    // Within the bound nothing is dropped.
    p.net.set("gone", 1);
    p.pruneNet();
    expect(p.net.size).toBe(2);
  });
});
