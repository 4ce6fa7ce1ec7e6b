// The golden cases of the plugin's cluster_hash spec (assembly/__tests__/cluster_hash_golden.ts) are
// what the independent TypeScript reference of Higress's algorithm computes today, and the
// reference itself agrees with FNV-1a 32's published values and Higress's slot layout.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { fnv1a32, GOLDEN_FILE, goldenModule, higressClusterFor, higressSlots } from "../helpers/higress-cluster-hash.js";

describe("cluster_hash TypeScript reference", () => {
  it("FNV-1a 32 published values", () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    expect(fnv1a32(enc(""))).toBe(0x811c9dc5);
    expect(fnv1a32(enc("a"))).toBe(0xe40c292c);
    expect(fnv1a32(enc("foobar"))).toBe(0xbf9cf968);
  });

  it("slots follow configuration order and weights", () => {
    const slots = higressSlots([{ cluster: "x", weight: 1 }, { cluster: "y", weight: 99 }]);
    expect(slots.length).toBe(100);
    expect(slots[0]).toBe("x");
    expect(slots.slice(1).every((s) => s === "y")).toBe(true);
    // FNV-1a-32("foobar") = 0xbf9cf968 = 3214735720, mod 100 = 20: the 21st slot
    expect(higressClusterFor([{ cluster: "x", weight: 21 }, { cluster: "y", weight: 79 }], new TextEncoder().encode("foobar"))).toBe("x");
    expect(higressClusterFor([{ cluster: "x", weight: 20 }, { cluster: "y", weight: 80 }], new TextEncoder().encode("foobar"))).toBe("y");
    expect(higressClusterFor([{ cluster: "x", weight: 21 }, { cluster: "y", weight: 79 }].reverse(), new TextEncoder().encode("foobar"))).toBe("y");
  });

  it("the committed golden file is current (regenerate: npx tsx test/helpers/higress-cluster-hash.ts --write)", () => {
    expect(fs.readFileSync(GOLDEN_FILE, "utf8")).toBe(goldenModule());
  });
});
