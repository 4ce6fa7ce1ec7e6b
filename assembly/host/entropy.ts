// Seeds for the per-VM random generator. Every VM of every gateway must draw different lease-id
// tags and tie-breaks, and VMs start with identical memory layouts and possibly identical clocks,
// so the seed comes from WASI random_get (implemented by proxy-wasm-cpp-host, hence by Higress's
// Envoy), mixed with the clock; the clock alone is used only if random_get fails.
import { nowNanos } from "./calls";

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "random_get")
declare function random_get(buf: usize, len: usize): i32;

export function randomSeed(): u64 {
  const buf = new ArrayBuffer(8);
  const p = changetype<usize>(buf);
  const ok = random_get(p, 8) == 0;
  const t = nowNanos();
  return ok ? load<u64>(p) ^ (t * 0x9E3779B97F4A7C15) : t;
}
