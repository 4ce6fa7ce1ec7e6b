// With hostsRefreshMs a VM reuses a cluster's host map read less than that long ago
// (services/candidates/upstream_hosts.ts HostMapReads); the maps of clusters no longer routed to
// must not stay (a configuration's clusters come and go; each map holds every host of its cluster).
import { HostMapReads, HostSnapshot } from "../services/candidates/upstream_hosts";

function snap(): HostSnapshot { return new HostSnapshot(new ArrayBuffer(8), []); }

describe("HostMapReads", () => {
  it("returns a cluster's map while it is younger than refreshMs", () => {
    const r = new HostMapReads();
    const s = snap();
    r.store("c1", s, 1000, 200);
    expect(r.fresh("c1", 1100, 200) === s).toBe(true);
    expect(r.fresh("c1", 1200, 200)).toBeNull();
    expect(r.fresh("c1", 900, 200)).toBeNull(); // a clock gone back
  });
  it("drops the maps no longer fresh when a new cluster is stored, keeps the fresh ones", () => {
    const r = new HostMapReads();
    for (let i = 0; i < 100; i++) r.store("old" + i.toString(), snap(), <f64>i, 200);
    expect(r.size).toBe(100);
    r.store("new", snap(), 250, 200); // old0..old50 are 200 ms old or more
    expect(r.size).toBe(50);
    expect(r.fresh("old99", 250, 200)).not.toBeNull();
    r.store("new", snap(), 1000, 200); // a cluster it holds: nothing dropped
    expect(r.size).toBe(50);
    r.store("newer", snap(), 1000, 200);
    expect(r.size).toBe(2);
  });
  it("forgets a cluster whose read failed", () => {
    const r = new HostMapReads();
    r.store("c1", snap(), 0, 200);
    r.store("c1", null, 10, 200);
    expect(r.size).toBe(0);
  });
});
