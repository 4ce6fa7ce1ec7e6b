// Host calls a guest may make while cpp-host runs code outside any context: during `_initialize` /
// `_start` (WasmBase::startVm, src/wasm.cc) and inside the guest's `malloc` when the host copies data
// in (WasmBase::allocMemory, include/proxy-wasm/wasm.h, as of higress-group/proxy-wasm-cpp-host
// 7850d17). Any other import called then fails the VM ("restricted_callback", src/v8/v8.cc), so a
// module that, say, reads the clock through proxy_get_current_time_nanoseconds at module level
// loads in Node but not in Envoy. Imports are wrapped to fail the same way here.
import type { ImportTable } from "./imports/types.js";

const WASI = ["wasi_unstable", "wasi_snapshot_preview1"];
const both = (name: string) => WASI.map((m) => `${m}.${name}`);

/** What `_initialize` / `_start` may call (startVm's list). */
export const START_ALLOWED: ReadonlySet<string> = new Set([
  "env.proxy_log", ...both("fd_write"), ...both("args_sizes_get"), ...both("args_get"), ...both("environ_sizes_get"),
  ...both("environ_get"), ...both("fd_prestat_get"), ...both("fd_prestat_dir_name"), ...both("clock_time_get"), ...both("random_get"),
]);

/** What the guest's `malloc` may call while the host allocates in it (allocMemory's list). */
export const MALLOC_ALLOWED: ReadonlySet<string> = new Set(["env.proxy_log", ...both("fd_write"), ...both("clock_time_get")]);

/** The import tables with each function failing (throwing, which traps the guest's call) when
 *  `restricted()` returns a set that does not hold its qualified name. */
export function restrictable(tables: Record<string, ImportTable>, restricted: () => ReadonlySet<string> | null): Record<string, ImportTable> {
  const out: Record<string, ImportTable> = {};
  for (const [module, table] of Object.entries(tables)) {
    const wrapped: ImportTable = {};
    for (const [name, fn] of Object.entries(table)) {
      const qualified = `${module}.${name}`;
      wrapped[name] = (...args: unknown[]) => {
        const allowed = restricted();
        if (allowed !== null && !allowed.has(qualified)) throw new Error(`restricted_callback: ${qualified} is not allowed here (cpp-host startVm / allocMemory)`);
        return fn(...args);
      };
    }
    out[module] = wrapped;
  }
  return out;
}
