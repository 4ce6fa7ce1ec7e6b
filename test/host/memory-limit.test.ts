// The host caps a VM's memory at 1 GiB as Envoy does (proxy-wasm-cpp-host limits.h
// PROXY_WASM_HOST_MAX_WASM_MEMORY_SIZE_BYTES): host-test/abi/memory-limit.ts gives the module's
// memory that maximum, so a grow past it fails here too.
import { describe, expect, it } from "vitest";
import { ENVOY_MAX_MEMORY_PAGES, capMemory } from "../../host-test/abi/memory-limit.js";

// (module (memory (export "memory") 1) (func (export "grow") (param i32) (result i32) local.get 0 memory.grow))
const GROW = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f,
  0x03, 0x02, 0x01, 0x00,
  0x05, 0x03, 0x01, 0x00, 0x01,
  0x07, 0x11, 0x02, 0x04, 0x67, 0x72, 0x6f, 0x77, 0x00, 0x00, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x00,
  0x0a, 0x08, 0x01, 0x06, 0x00, 0x20, 0x00, 0x40, 0x00, 0x0b,
]);

function grower(bytes: Uint8Array<ArrayBuffer>): (pages: number) => number {
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
  return instance.exports.grow as (pages: number) => number;
}

describe("the VM's memory limit", () => {
  it("a grow past the cap fails (-1), as in Envoy; below it succeeds", () => {
    const grow = grower(capMemory(GROW, 4));
    expect(grow(2)).toBe(1);
    expect(grow(2)).toBe(-1); // 5 pages > 4
    expect(grow(1)).toBe(3);
    const envoy = grower(capMemory(GROW));
    expect(envoy(ENVOY_MAX_MEMORY_PAGES)).toBe(-1); // 1 + 16,384 pages: past 1 GiB
    expect(grower(GROW)(1)).toBe(1); // uncapped module: Node alone would let it grow
  });
  it("keeps a module's own lower maximum, and leaves a module that is not sections unchanged", () => {
    // memory 1..2 pages
    const fixed = Uint8Array.from([...GROW.subarray(0, 20), 0x05, 0x04, 0x01, 0x01, 0x01, 0x02, ...GROW.subarray(25)]);
    const grow = grower(capMemory(fixed));
    expect(grow(1)).toBe(1);
    expect(grow(1)).toBe(-1);
    const junk = Uint8Array.from([1, 2, 3]);
    expect(capMemory(junk)).toBe(junk);
  });
});
