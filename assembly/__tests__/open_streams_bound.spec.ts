// predicted_latency's OpenStreams keeps a decode time and a cached wait per host; pods come and go
// with new addresses, so it keeps at most HOSTS_KEPT hosts' worth beyond those with open streams.
import { OpenStream, OpenStreams } from "../policy/predicted_latency/open_streams";
import { HOSTS_KEPT } from "../util/host_maps";

function finished(host: string): OpenStream {
  const s = new OpenStream(host, 0, 64, 100, 0, 0, 50, 50, 10);
  s.firstMs = 50;
  s.endMs = 700;
  s.status = 200;
  return s;
}

describe("OpenStreams' per-host state", () => {
  it("stays within HOSTS_KEPT hosts however many addresses come and go, and keeps the hosts with open streams", () => {
    const o = new OpenStreams();
    const open = new OpenStream("10.9.9.9:8000", 0, 64, 100, 0, 0, 50, 50, 10);
    o.add(open);
    for (let i = 0; i < HOSTS_KEPT * 2 + 5; i++) {
      const s = finished("10.1." + i.toString() + ":8000");
      o.add(s);
      o.remove(s);
      expect(o.hostsKept).toBeLessThanOrEqual(HOSTS_KEPT + 1);
    }
    expect(o.hostsKept).toBeGreaterThan(1); // it drops only when full, not at every end
    expect(o.count("10.9.9.9:8000")).toBe(1);
    expect(o.prefillAhead("10.9.9.9:8000")).toBe(100);
  });
});
