// The WASI subset proxy-wasm-cpp-host provides (src/exports.cc wasi_unstable_*): stdout/stderr go
// to the log (info/error), clocks and randomness work, environment and arguments are empty, files
// do not exist, proc_exit fails the VM. Registered under both wasi_snapshot_preview1 and
// wasi_unstable. Failure behaviour: WASI errno values (8 EBADF, 21 EFAULT, 52 ENOSYS, 58 ENOTSUP).
import { randomFillSync } from "node:crypto";
import { ProcExit } from "../proc-exit.js";
import type { WasmVm } from "../vm.js";
import type { ImportTable } from "./types.js";

const ESUCCESS = 0, EBADF = 8, EFAULT = 21, ENOSYS = 52, ENOTSUP = 58;

/** cpp-host include/proxy-wasm/limits.h PROXY_WASM_HOST_WASI_RANDOM_GET_MAX_SIZE_BYTES. */
const RANDOM_GET_MAX_BYTES = 64 * 1024;

export function wasiImports(vm: WasmVm): ImportTable {
  const mem = vm.memory;
  return {
    fd_write(fd: number, iovs: number, iovsLen: number, nwrittenPtr: number) {
      if (fd !== 1 && fd !== 2) return EBADF;
      const parts: Buffer[] = [];
      for (let i = 0; i < iovsLen; i++) {
        const ptr = mem.readU32(iovs + i * 8);
        const len = mem.readU32(iovs + i * 8 + 4);
        if (ptr === null || len === null) return EFAULT;
        const b = mem.read(ptr, len);
        if (b === null) return EFAULT;
        parts.push(b);
      }
      const all = Buffer.concat(parts);
      if (all.length) {
        let text = all.toString("utf8");
        if (text.endsWith("\n")) text = text.slice(0, -1);
        const ctx = vm.activeContext();
        vm.host.logs.write({ vm: vm.index, contextId: ctx?.id ?? 0, level: fd === 1 ? "info" : "error", message: text });
      }
      return mem.writeU32(nwrittenPtr, all.length) ? ESUCCESS : EFAULT;
    },
    fd_read: () => ENOSYS,
    fd_seek: () => ESUCCESS,
    fd_close: () => ESUCCESS,
    fd_fdstat_get(fd: number, statPtr: number) {
      if (fd !== 1 && fd !== 2) return EBADF;
      const stat = Buffer.alloc(24);
      stat.writeBigUInt64LE(64n, 8); // fs_rights_base = FD_WRITE
      return mem.write(statPtr, stat) ? ESUCCESS : EFAULT;
    },
    fd_prestat_get: () => EBADF,
    fd_prestat_dir_name: () => EBADF,
    environ_get: () => ESUCCESS,
    environ_sizes_get(countPtr: number, sizePtr: number) {
      return mem.writeU32(countPtr, 0) && mem.writeU32(sizePtr, 0) ? ESUCCESS : EFAULT;
    },
    args_get: () => ESUCCESS,
    args_sizes_get(argcPtr: number, sizePtr: number) {
      return mem.writeU32(argcPtr, 0) && mem.writeU32(sizePtr, 0) ? ESUCCESS : EFAULT;
    },
    clock_time_get(clockId: number, _precision: bigint, resultPtr: number) {
      if (clockId !== 0) return ENOTSUP; // realtime only, like cpp-host
      const ns = BigInt(Math.round(vm.host.backend.now() * 1000)) * 1000n;
      return mem.writeU64(resultPtr, ns) ? ESUCCESS : EFAULT;
    },
    random_get(ptr: number, len: number) {
      // cpp-host exports.cc: more than PROXY_WASM_HOST_WASI_RANDOM_GET_MAX_SIZE_BYTES (64 KiB) is EINVAL (28).
      if ((len >>> 0) > RANDOM_GET_MAX_BYTES) return 28;
      const b = Buffer.alloc(len >>> 0);
      const source = vm.host.backend.random;
      if (source) source.call(vm.host.backend, b);
      else randomFillSync(b);
      return mem.write(ptr, b) ? ESUCCESS : EFAULT;
    },
    sched_yield: () => ESUCCESS,
    poll_oneoff: () => ENOSYS,
    proc_exit(code: number) {
      throw new ProcExit(code);
    },
  };
}
