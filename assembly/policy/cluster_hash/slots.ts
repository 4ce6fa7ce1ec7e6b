// cluster_hash's slot table, exactly as Higress builds it (higress-parity.md section 9): 100 slots,
// each cluster repeated `weight` times in configuration order (weights sum to 100, duplicates
// allowed); a request goes to slot FNV-1a-32(raw header value bytes) mod 100. Go's `int` is 64-bit
// on wasip1, so int(Sum32()) is never negative and the index is the plain unsigned remainder.
// Not a hash ring: changing any weight remaps keys (as in Higress). Pure, never traps.
import { fnv1a32Bytes } from "../../util/fnv";
import { WeightedCluster } from "../../config/cluster_hash_settings";

export class SlotTable {
  readonly slots: string[] = [];

  constructor(entries: WeightedCluster[]) {
    for (let i = 0; i < entries.length; i++) {
      for (let w = 0; w < entries[i].weight; w++) this.slots.push(entries[i].cluster);
    }
  }

  /** Slot index of a hash key (its raw bytes); -1 for an empty table. */
  indexOf(key: Uint8Array): i32 {
    const n = this.slots.length;
    if (n == 0) return -1;
    return <i32>(fnv1a32Bytes(key) % <u32>n);
  }

  /** The cluster of a hash key; "" for an empty table. */
  clusterFor(key: Uint8Array): string {
    const i = this.indexOf(key);
    return i < 0 ? "" : this.slots[i];
  }
}
