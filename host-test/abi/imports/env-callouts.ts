// Callout imports: proxy_http_call (spec v0.2.1), gRPC (not emulated), and the Higress ones:
// proxy_redis_init / proxy_redis_call / proxy_get_upstream_hosts /
// proxy_set_upstream_override_host / proxy_inject_encoded_data_to_filter_chain (higress-abi.md).
// Failure behaviour: statuses only.
import { WasmResult } from "../constants.js";
import { HeaderMap } from "../header-map.js";
import { decodePairs, encodePairs } from "../pairs.js";
import type { WasmVm } from "../vm.js";
import type { UpstreamHostInfo } from "../backend.js";
import type { ImportTable } from "./types.js";

export function calloutImports(vm: WasmVm): ImportTable {
  const mem = vm.memory;
  const unimplemented = () => WasmResult.Unimplemented;
  return {
    proxy_http_call(uriPtr: number, uriSize: number, hp: number, hs: number, bp: number, bs: number,
      tp: number, ts: number, timeoutMs: number, tokenPtr: number) {
      const cluster = mem.readString(uriPtr, uriSize);
      const headers = mem.read(hp, hs);
      const body = mem.read(bp, bs);
      const trailers = mem.read(tp, ts);
      if (cluster === null || headers === null || body === null || trailers === null) return WasmResult.InvalidMemoryAccess;
      // cpp-host writes the token slot first to validate it before starting the async call.
      if (!mem.writeU32(tokenPtr, 0)) return WasmResult.InvalidMemoryAccess;
      // Envoy context.cc httpCall takes the timeout as a signed int: 2^31 ms or more is negative,
      // BadArgument.
      if ((timeoutMs >>> 0) >= 0x80000000) return WasmResult.BadArgument;
      // cpp-host exports.cc: callouts run on contextOrEffectiveContext()->root_context().
      const r = vm.rootOf(vm.activeContext()).httpCall(cluster, new HeaderMap(decodePairs(headers)), body, new HeaderMap(decodePairs(trailers)), timeoutMs >>> 0);
      mem.writeU32(tokenPtr, r.token);
      return r.status;
    },
    // gRPC callouts are outside this emulator: a guest using them sees Unimplemented, not a link error.
    proxy_grpc_call: unimplemented,
    proxy_grpc_stream: unimplemented,
    proxy_grpc_send: unimplemented,
    proxy_grpc_cancel: unimplemented,
    proxy_grpc_close: unimplemented,
  };
}

/**
 * proxy_get_upstream_hosts' pair map (higress-abi.md): key ip:port, value JSON with health_status
 * and metrics (the last health-check body; JSON.stringify escapes it). Re-encoded only when a
 * host, its health or its body changed (same string objects otherwise): JSON-escaping every
 * host's 64 KiB body on every request is a cost of this emulator, not of Envoy's C++.
 */
class HostsEncoding {
  private last: UpstreamHostInfo[] = [];
  private encoded: Buffer = encodePairs([]);

  encode(hosts: UpstreamHostInfo[]): Buffer {
    const same = hosts.length === this.last.length && hosts.every((h, i) => {
      const o = this.last[i];
      return h.address === o.address && h.health === o.health && h.metrics === o.metrics;
    });
    if (!same) {
      this.encoded = encodePairs(hosts.map((h) => [h.address, JSON.stringify({ health_status: h.health, metrics: h.metrics ?? "" })] as const));
      this.last = hosts;
    }
    return this.encoded;
  }
}

export function higressImports(vm: WasmVm): ImportTable {
  const hostsEncoding = new HostsEncoding();
  const mem = vm.memory;
  return {
    proxy_redis_init(cp: number, cl: number, up: number, ul: number, pp: number, pl: number, timeoutMs: number) {
      const cluster = mem.readString(cp, cl);
      const user = mem.readString(up, ul);
      const pass = mem.readString(pp, pl);
      if (cluster === null || user === null || pass === null) return WasmResult.InvalidMemoryAccess;
      return vm.host.backend.redisInit(vm.index, cluster, user, pass, timeoutMs >>> 0);
    },
    proxy_redis_call(cp: number, cl: number, qp: number, ql: number, tokenPtr: number) {
      const cluster = mem.readString(cp, cl);
      const query = mem.read(qp, ql);
      if (cluster === null || query === null) return WasmResult.InvalidMemoryAccess;
      if (!mem.writeU32(tokenPtr, 0)) return WasmResult.InvalidMemoryAccess;
      // Executed on the root context: the reply arrives with the root context id.
      const r = vm.rootOf(vm.activeContext()).redisCall(cluster, query);
      if (r.status === WasmResult.Ok) mem.writeU32(tokenPtr, r.token);
      return r.status;
    },
    proxy_get_upstream_hosts(retPtrPtr: number, retSizePtr: number) {
      const ctx = vm.activeContext();
      if (!ctx || ctx.kind !== "http" || !ctx.cluster) return WasmResult.NotFound;
      const hosts = vm.host.backend.upstreamHosts(ctx.cluster);
      return mem.copyOut(hostsEncoding.encode(hosts), retPtrPtr, retSizePtr) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
    },
    proxy_set_upstream_override_host(ap: number, al: number) {
      const addr = mem.readString(ap, al);
      if (addr === null) return WasmResult.InvalidMemoryAccess;
      const ctx = vm.activeContext();
      if (!ctx || ctx.kind !== "http") return WasmResult.BadArgument; // no stream to pin on a root context
      return ctx.setOverrideHost(addr);
    },
    proxy_inject_encoded_data_to_filter_chain: () => WasmResult.Unimplemented,
  };
}
