// predicted_latency's pool model keeps each host's stats; pods come and go with new addresses, and
// without Redis (or while it is unreachable: no read replaces the map) nothing else drops them, so
// past HOSTS_KEPT hosts those not among the candidates go.
import { ModelStore } from "../policy/predicted_latency/store";
import { HoldList } from "../policy/predicted_latency/hold";
import { SloSettings } from "../config/slo_settings";
import { Stats } from "../services/stats";
import { HOSTS_KEPT } from "../util/host_maps";

function hosts(batch: i32, n: i32): string[] {
  const out = new Array<string>(n);
  for (let i = 0; i < n; i++) out[i] = "10." + batch.toString() + "." + i.toString() + ":8000";
  return out;
}

describe("PoolModel's per-host stats", () => {
  it("stay within HOSTS_KEPT plus the candidates however many addresses come and go", () => {
    const model = new ModelStore(new SloSettings(), new Stats(), "t", new HoldList()).of(null);
    const n = 64;
    let most = 0;
    for (let b = 0; b < (HOSTS_KEPT / n) * 2 + 3; b++) {
      const c = hosts(b, n);
      expect(model.modelsFor(c).length).toBe(n);
      expect(model.hostsKept).toBeLessThanOrEqual(HOSTS_KEPT + n);
      most = max(most, model.hostsKept);
    }
    expect(most).toBeGreaterThan(HOSTS_KEPT); // dropped only when full, not at every new list
  });
});
