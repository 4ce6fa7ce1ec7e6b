// cluster_hash's slot table against golden picks from an independent TypeScript statement of
// Higress's algorithm (test/helpers/higress-cluster-hash.ts), including non-ASCII and obs-text keys.
import { SlotTable } from "../policy/cluster_hash/slots";
import { WeightedCluster as ClusterWeight } from "../config/cluster_hash_settings";
import { GOLDEN_KEYS, GOLDEN_PICKS, GOLDEN_WEIGHTS } from "./cluster_hash_golden";

function bytesOf(a: u8[]): Uint8Array {
  const b = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) b[i] = a[i];
  return b;
}

describe("cluster_hash slot table", () => {
  it("expands clusters by weight, in configuration order", () => {
    const t = new SlotTable([new ClusterWeight("a", 2), new ClusterWeight("b", 1), new ClusterWeight("a", 97)]);
    expect(t.slots.length).toBe(100);
    expect(t.slots[0]).toBe("a");
    expect(t.slots[2]).toBe("b");
    expect(t.slots[99]).toBe("a");
  });

  it("picks what Higress picks for every golden key", () => {
    for (let c = 0; c < GOLDEN_WEIGHTS.length; c++) {
      const entries = new Array<ClusterWeight>();
      for (let i = 0; i < GOLDEN_WEIGHTS[c].length; i++) entries.push(new ClusterWeight("c" + i.toString(), GOLDEN_WEIGHTS[c][i]));
      const t = new SlotTable(entries);
      for (let k = 0; k < GOLDEN_KEYS.length; k++) {
        expect(t.clusterFor(bytesOf(GOLDEN_KEYS[k]))).toBe("c" + GOLDEN_PICKS[c][k].toString());
      }
    }
  });

  it("an empty table picks nothing", () => {
    const t = new SlotTable([]);
    expect(t.indexOf(bytesOf([1, 2]))).toBe(-1);
    expect(t.clusterFor(bytesOf([1, 2]))).toBe("");
  });
});
