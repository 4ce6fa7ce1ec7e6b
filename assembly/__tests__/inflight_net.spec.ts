// The in-flight tracker's net counts (inflight.ts): this VM's picks minus its ends per host, read
// twice around a Redis read to correct it, and pruned when hosts come and go.
import { InflightTracker, PoolInflight } from "../services/metrics_view/inflight";
import { Pool } from "../services/lease/pool";
import { LbConfig } from "../config/lb_config";
import { RedisClient } from "../redis/client";
import { LocalLeastRequest } from "../services/candidates/local_least";

function pool(): Pool {
  return new Pool(new LbConfig(), new RedisClient("redis", "", "", 1000, 3, 1000), "r", "c");
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
    t.notePick(p, "a", 1);
    t.noteRelease(p, "a", 1);
    const local = new LocalLeastRequest();
    // Redis counted 5 when it answered (this VM's first pick included).
    expect(t.inflightFromRead(p, "a", 5, atSend, local)).toBe(6);
    // Never below 0 (a read older than the ends it is corrected by).
    expect(t.inflightFromRead(p, "a", 0, 10, local)).toBe(0);
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
