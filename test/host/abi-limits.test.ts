// Small ABI limits Envoy enforces and the host must too (never kinder): WASI random_get refuses more
// than 64 KiB (cpp-host exports.cc, limits.h PROXY_WASM_HOST_WASI_RANDOM_GET_MAX_SIZE_BYTES:
// EINVAL); a counter's increment must be above 0 (envoy context.cc incrementMetric: BadArgument);
// an http_call's timeout is a signed int there (2^31 ms or more: BadArgument).
import { describe, expect, it } from "vitest";
import { wasiImports } from "../../host-test/abi/imports/wasi.js";
import { calloutImports } from "../../host-test/abi/imports/env-callouts.js";
import { MetricsRegistry } from "../../host-test/abi/metrics.js";
import { MetricType, WasmResult } from "../../host-test/abi/constants.js";
import type { WasmVm } from "../../host-test/abi/vm.js";

describe("ABI limits", () => {
  it("random_get: up to 64 KiB served, more is EINVAL (28)", () => {
    const written: number[] = [];
    const vm = { memory: { write: (_p: number, b: Buffer) => { written.push(b.length); return true; } }, host: { backend: {} } } as unknown as WasmVm;
    const wasi = wasiImports(vm);
    expect(wasi.random_get(0, 8)).toBe(0);
    expect(wasi.random_get(0, 64 * 1024)).toBe(0);
    expect(wasi.random_get(0, 64 * 1024 + 1)).toBe(28);
    expect(written).toEqual([8, 64 * 1024]);
  });
  it("a counter's increment of 0 or less is BadArgument; a gauge moves either way", () => {
    const m = new MetricsRegistry([]);
    const c = m.define(MetricType.Counter, "c").id;
    expect(m.increment(c, 1)).toBe(WasmResult.Ok);
    expect(m.increment(c, 0)).toBe(WasmResult.BadArgument);
    expect(m.increment(c, -1)).toBe(WasmResult.BadArgument);
    const g = m.define(MetricType.Gauge, "g").id;
    expect(m.increment(g, -2)).toBe(WasmResult.Ok);
  });
  it("http_call: a timeout of 2^31 ms or more is BadArgument, before any call starts", () => {
    const started: number[] = [];
    const root = { httpCall: (_c: string, _h: unknown, _b: unknown, _t: unknown, timeout: number) => { started.push(timeout); return { status: 0, token: 1 }; } };
    const mem = { readString: () => "c", read: () => Buffer.alloc(0), writeU32: () => true };
    const vm = { memory: mem, rootOf: () => root, activeContext: () => undefined } as unknown as WasmVm;
    const call = calloutImports(vm).proxy_http_call;
    expect(call(0, 1, 0, 0, 0, 0, 0, 0, 0x7fffffff, 0)).toBe(WasmResult.Ok);
    expect(call(0, 1, 0, 0, 0, 0, 0, 0, 0x80000000, 0)).toBe(WasmResult.BadArgument);
    expect(call(0, 1, 0, 0, 0, 0, 0, 0, -1, 0)).toBe(WasmResult.BadArgument);
    expect(started).toEqual([0x7fffffff]);
  });
});
