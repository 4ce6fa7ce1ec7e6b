// Higress's extensions to the Proxy-Wasm ABI (see ../shared/reference/higress-abi.md).
// Every parameter is an i32 and the result a WasmResult status; they are registered by the Higress
// host only for modules exporting proxy_abi_version_0_2_100 (assembly/index.ts does).

// @ts-ignore: decorator
@external("env", "proxy_redis_init")
export declare function proxy_redis_init(clusterPtr: usize, clusterLen: usize, userPtr: usize, userLen: usize,
  passPtr: usize, passLen: usize, timeoutMs: u32): u32;

// @ts-ignore: decorator
@external("env", "proxy_redis_call")
export declare function proxy_redis_call(clusterPtr: usize, clusterLen: usize, queryPtr: usize, queryLen: usize,
  tokenOutPtr: usize): u32;

// @ts-ignore: decorator
@external("env", "proxy_get_upstream_hosts")
export declare function proxy_get_upstream_hosts(retPtrPtr: usize, retSizePtr: usize): u32;

// @ts-ignore: decorator
@external("env", "proxy_set_upstream_override_host")
export declare function proxy_set_upstream_override_host(addrPtr: usize, addrLen: usize): u32;
