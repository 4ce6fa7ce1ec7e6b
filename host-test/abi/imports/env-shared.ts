// Shared data, shared queues and metrics imports (spec v0.2.1; cpp-host src/exports.cc,
// src/shared_data.cc, src/shared_queue.cc; Envoy context.cc metrics).
// Failure behaviour: statuses only.
import { WasmResult } from "../constants.js";
import type { WasmVm } from "../vm.js";
import type { ImportTable } from "./types.js";

export function sharedImports(vm: WasmVm): ImportTable {
  const mem = vm.memory;
  const host = vm.host;
  const vmId = () => host.options.vmId;
  return {
    proxy_get_shared_data(kp: number, ks: number, retPtrPtr: number, retSizePtr: number, casPtr: number) {
      const key = mem.readString(kp, ks);
      if (key === null) return WasmResult.InvalidMemoryAccess;
      const r = host.sharedData.get(vmId(), key);
      if (r.status !== WasmResult.Ok) return r.status;
      if (!mem.copyOut(r.value!, retPtrPtr, retSizePtr)) return WasmResult.InvalidMemoryAccess;
      return mem.writeU32(casPtr, r.cas!) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
    proxy_set_shared_data(kp: number, ks: number, vp: number, vs: number, cas: number) {
      const key = mem.readString(kp, ks);
      const value = mem.read(vp, vs);
      if (key === null || value === null) return WasmResult.InvalidMemoryAccess;
      return host.sharedData.set(vmId(), key, value, cas >>> 0);
    },
    proxy_register_shared_queue(np: number, ns: number, tokenPtr: number) {
      const name = mem.readString(np, ns);
      if (name === null) return WasmResult.InvalidMemoryAccess;
      const root = vm.rootOf(vm.activeContext());
      // proxy_on_queue_ready is posted to the registering VM's thread (cpp-host): asynchronous here
      // too. It goes to the registering root (a stream registers its root, context.cc
      // registerSharedQueue); a root deleted since gets nothing (shared_queue.cc enqueue: the
      // posted call finds no context and calls nothing).
      const token = host.queues.register(vmId(), name, (t) => queueMicrotask(() => {
        if (vm.failed) { vm.refusedCalls++; return; }
        if (root.deleted) return;
        vm.callback("proxy_on_queue_ready", root.id, [root.id, t]);
      }));
      return mem.writeU32(tokenPtr, token) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
    proxy_resolve_shared_queue(vp: number, vs: number, np: number, ns: number, tokenPtr: number) {
      const id = mem.readString(vp, vs);
      const name = mem.readString(np, ns);
      if (id === null || name === null) return WasmResult.InvalidMemoryAccess;
      const token = host.queues.resolve(id === "" ? vmId() : id, name);
      if (token === undefined) return WasmResult.NotFound;
      return mem.writeU32(tokenPtr, token) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
    proxy_enqueue_shared_queue(token: number, dp: number, ds: number) {
      const data = mem.read(dp, ds);
      if (data === null) return WasmResult.InvalidMemoryAccess;
      return host.queues.enqueue(token >>> 0, data);
    },
    proxy_dequeue_shared_queue(token: number, retPtrPtr: number, retSizePtr: number) {
      const r = host.queues.dequeue(token >>> 0);
      if (r.status !== WasmResult.Ok) return r.status;
      return mem.copyOut(r.data!, retPtrPtr, retSizePtr) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
    proxy_define_metric(type: number, np: number, ns: number, idPtr: number) {
      const name = mem.readString(np, ns);
      if (name === null) return WasmResult.InvalidMemoryAccess;
      const r = host.metrics.define(type, name);
      if (r.status !== WasmResult.Ok) return r.status;
      return mem.writeU32(idPtr, r.id) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
    proxy_increment_metric(id: number, offset: bigint | number) {
      return host.metrics.increment(id >>> 0, Number(offset));
    },
    proxy_record_metric(id: number, value: bigint | number) {
      return host.metrics.record(id >>> 0, Number(BigInt.asUintN(64, BigInt(value))));
    },
    proxy_get_metric(id: number, retPtr: number) {
      const r = host.metrics.get(id >>> 0);
      if (r.status !== WasmResult.Ok) return r.status;
      return mem.writeU64(retPtr, BigInt(Math.trunc(r.value))) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
  };
}
