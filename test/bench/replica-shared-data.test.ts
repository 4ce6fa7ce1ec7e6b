// The what-if store of `slo-hetero --replica-share-ms` (bench/virtual/replica-shared-data.ts): one
// shared data across virtual gateways, each seeing the others' writes lagMs late.
import { describe, expect, it } from "vitest";
import { WasmResult } from "../../host-test/abi/constants.js";
import { ReplicaSharedData } from "../../bench/virtual/replica-shared-data.js";

const text = (r: { value?: Buffer }) => r.value?.toString() ?? null;

describe("shared data across replicas, lagMs late", () => {
  it("shows another replica's write once it is lagMs old, its own at once", () => {
    let now = 0;
    const store = new ReplicaSharedData(() => now, 10);
    const a = store.view(0);
    const b = store.view(1);
    expect(a.get("", "k").status).toBe(WasmResult.NotFound);
    a.set("", "k", Buffer.from("v1"), 0);
    // Created just now: b sees that the key exists (a slot claim) and its first content.
    expect(text(b.get("", "k"))).toBe("v1");
    now = 20;
    a.set("", "k", Buffer.from("v2"), 0);
    now = 25;
    expect(text(a.get("", "k"))).toBe("v2");
    expect(text(b.get("", "k"))).toBe("v1");
    now = 30;
    expect(text(b.get("", "k"))).toBe("v2");
  });

  it("checks a compare-and-set against the newest version, not the one a replica sees", () => {
    let now = 0;
    const store = new ReplicaSharedData(() => now, 10);
    const a = store.view(0);
    const b = store.view(1);
    a.set("", "k", Buffer.from("v1"), 0);
    now = 20;
    a.set("", "k", Buffer.from("v2"), 0);
    now = 21;
    const seen = b.get("", "k");
    expect(text(seen)).toBe("v1");
    expect(b.set("", "k", Buffer.from("b"), seen.cas!)).toBe(WasmResult.CasMismatch);
    expect(b.set("", "k", Buffer.from("b"), a.get("", "k").cas!)).toBe(WasmResult.Ok);
    expect(text(b.get("", "k"))).toBe("b");
  });

  it("at lagMs 0 is one store for every replica", () => {
    const store = new ReplicaSharedData(() => 5, 0);
    store.view(0).set("", "k", Buffer.from("x"), 0);
    expect(text(store.view(3).get("", "k"))).toBe("x");
  });
});
