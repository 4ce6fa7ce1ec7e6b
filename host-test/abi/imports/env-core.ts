// env.proxy_* imports for logging, time, ticks, properties, contexts (spec v0.2.1; cpp-host
// src/exports.cc). Failure behaviour: statuses only (InvalidMemoryAccess for bad pointers).
import { LOG_LEVEL_NAMES, WasmResult } from "../constants.js";
import { getProperty, setProperty } from "../properties.js";
import type { WasmVm } from "../vm.js";
import type { ImportTable } from "./types.js";

export function coreImports(vm: WasmVm): ImportTable {
  const mem = vm.memory;
  const active = () => vm.activeContext() ?? vm.root;
  return {
    proxy_log(level: number, ptr: number, size: number) {
      if (level < 0 || level > 5) return WasmResult.BadArgument;
      const msg = mem.readString(ptr, size);
      if (msg === null) return WasmResult.InvalidMemoryAccess;
      vm.host.logs.write({ vm: vm.index, contextId: active()?.id ?? 0, level: LOG_LEVEL_NAMES[level], message: msg });
      return WasmResult.Ok;
    },
    proxy_get_log_level(retPtr: number) {
      return mem.writeU32(retPtr, vm.host.logs.levelIndex()) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
    proxy_get_current_time_nanoseconds(retPtr: number) {
      const ns = BigInt(Math.round(vm.host.backend.now() * 1000)) * 1000n;
      return mem.writeU64(retPtr, ns) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
    proxy_set_tick_period_milliseconds(ms: number) {
      // The tick belongs to the root context (cpp-host setTimerPeriod(root_context()->id())).
      vm.rootOf(vm.activeContext()).setTickPeriod(ms >>> 0);
      return WasmResult.Ok;
    },
    proxy_get_property(pathPtr: number, pathSize: number, retPtrPtr: number, retSizePtr: number) {
      const path = mem.readString(pathPtr, pathSize);
      if (path === null) return WasmResult.InvalidMemoryAccess;
      const value = getProperty(active(), path);
      if (value === null) return WasmResult.NotFound;
      return mem.copyOut(value, retPtrPtr, retSizePtr) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
    proxy_set_property(pathPtr: number, pathSize: number, valuePtr: number, valueSize: number) {
      const path = mem.readString(pathPtr, pathSize);
      const value = mem.read(valuePtr, valueSize);
      if (path === null || value === null) return WasmResult.InvalidMemoryAccess;
      const ctx = active();
      // Envoy's Context::setProperty needs a stream's filter state: on a root context it is
      // NotFound (audit row 12).
      if (ctx.kind === "root") return WasmResult.NotFound;
      setProperty(ctx, path, value);
      return WasmResult.Ok;
    },
    proxy_set_effective_context(id: number) {
      return vm.setEffectiveContext(id >>> 0) ? WasmResult.Ok : WasmResult.BadArgument;
    },
    proxy_done() {
      // cpp-host ContextBase::done -> WasmBase::doneRootContext: a root whose proxy_on_done
      // returned false (pending done) is deleted now; anything else is NotFound.
      const ctx = vm.activeContext();
      return ctx && ctx.kind === "root" && ctx.completeDone() ? WasmResult.Ok : WasmResult.NotFound;
    },
    proxy_call_foreign_function(namePtr: number, nameSize: number) {
      // cpp-host: an unregistered foreign function is NotFound; this host registers none.
      return mem.read(namePtr, nameSize) === null ? WasmResult.InvalidMemoryAccess : WasmResult.NotFound;
    },
    proxy_get_status(codePtr: number, retPtrPtr: number, retSizePtr: number) {
      // Only meaningful in gRPC callbacks, which this host does not emulate: Ok, empty message.
      if (!mem.writeU32(codePtr, 0)) return WasmResult.InvalidMemoryAccess;
      return mem.copyOut(Buffer.alloc(0), retPtrPtr, retSizePtr) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
  };
}
