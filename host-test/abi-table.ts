// The import/export table of a Proxy-Wasm module for Higress's Envoy (ABI 0.2.1 as implemented by
// proxy-wasm-cpp-host, plus the Higress extensions registered for proxy_abi_version_0_2_100).
// Source: ../shared/reference/higress-abi.md and the proxy-wasm spec (ABI v0.2.1).
// Signatures in wasm value types; every pointer/size is an i32 on wasm32.

export interface FuncSig { params: string[]; results: string[] }
const sig = (params: string, results = "i32"): FuncSig => ({
  params: params.length ? params.split(" ") : [],
  results: results.length ? results.split(" ") : [],
});
const i32s = (n: number): string => Array(n).fill("i32").join(" ");

/** Host functions a Higress Envoy provides, by module and name. */
export const HOST_IMPORTS: Record<string, Record<string, FuncSig>> = {
  env: {
    proxy_log: sig(i32s(3)),
    proxy_get_log_level: sig(i32s(1)),
    proxy_get_status: sig(i32s(3)),
    proxy_set_tick_period_milliseconds: sig(i32s(1)),
    proxy_get_current_time_nanoseconds: sig(i32s(1)),
    proxy_get_property: sig(i32s(4)),
    proxy_set_property: sig(i32s(4)),
    proxy_continue_stream: sig(i32s(1)),
    proxy_close_stream: sig(i32s(1)),
    proxy_send_local_response: sig(i32s(8)),
    proxy_get_shared_data: sig(i32s(5)),
    proxy_set_shared_data: sig(i32s(5)),
    proxy_register_shared_queue: sig(i32s(3)),
    proxy_resolve_shared_queue: sig(i32s(5)),
    proxy_dequeue_shared_queue: sig(i32s(3)),
    proxy_enqueue_shared_queue: sig(i32s(3)),
    proxy_add_header_map_value: sig(i32s(5)),
    proxy_get_header_map_value: sig(i32s(5)),
    proxy_get_header_map_pairs: sig(i32s(3)),
    proxy_set_header_map_pairs: sig(i32s(3)),
    proxy_replace_header_map_value: sig(i32s(5)),
    proxy_remove_header_map_value: sig(i32s(3)),
    proxy_get_header_map_size: sig(i32s(2)),
    proxy_get_buffer_bytes: sig(i32s(5)),
    proxy_get_buffer_status: sig(i32s(3)),
    proxy_set_buffer_bytes: sig(i32s(5)),
    proxy_http_call: sig(i32s(10)),
    proxy_define_metric: sig(i32s(4)),
    proxy_increment_metric: sig("i32 i64"),
    proxy_record_metric: sig("i32 i64"),
    proxy_get_metric: sig(i32s(2)),
    proxy_set_effective_context: sig(i32s(1)),
    proxy_done: sig(""),
    proxy_call_foreign_function: sig(i32s(6)),
    // Higress extensions (higress-abi.md)
    proxy_redis_init: sig(i32s(7)),
    proxy_redis_call: sig(i32s(5)),
    proxy_get_upstream_hosts: sig(i32s(2)),
    proxy_set_upstream_override_host: sig(i32s(2)),
    proxy_inject_encoded_data_to_filter_chain: sig(i32s(3)),
  },
  wasi_snapshot_preview1: {
    proc_exit: sig("i32", ""),
    fd_write: sig(i32s(4)),
    fd_read: sig(i32s(4)),
    fd_close: sig(i32s(1)),
    fd_seek: sig("i32 i64 i32 i32"),
    fd_fdstat_get: sig(i32s(2)),
    clock_time_get: sig("i32 i64 i32"),
    random_get: sig(i32s(2)),
    environ_get: sig(i32s(2)),
    environ_sizes_get: sig(i32s(2)),
    args_get: sig(i32s(2)),
    args_sizes_get: sig(i32s(2)),
    sched_yield: sig(""),
  },
};

/** Functions the host may call in the module (ABI 0.2.1 callbacks + Higress's Redis callback). */
export const MODULE_EXPORTS: Record<string, FuncSig> = {
  _initialize: sig("", ""),
  malloc: sig("i32"),
  free: sig("i32", ""),
  proxy_on_memory_allocate: sig("i32"),
  proxy_abi_version_0_2_100: sig("", ""),
  proxy_on_vm_start: sig(i32s(2)),
  proxy_validate_configuration: sig(i32s(2)),
  proxy_on_configure: sig(i32s(2)),
  proxy_on_tick: sig("i32", ""),
  proxy_on_foreign_function: sig(i32s(3), ""),
  proxy_on_queue_ready: sig(i32s(2), ""),
  proxy_on_context_create: sig(i32s(2), ""),
  proxy_on_new_connection: sig(i32s(1)),
  proxy_on_request_headers: sig(i32s(3)),
  proxy_on_request_body: sig(i32s(3)),
  proxy_on_request_trailers: sig(i32s(2)),
  proxy_on_request_metadata: sig(i32s(2)),
  proxy_on_response_headers: sig(i32s(3)),
  proxy_on_response_body: sig(i32s(3)),
  proxy_on_response_trailers: sig(i32s(2)),
  proxy_on_response_metadata: sig(i32s(2)),
  proxy_on_http_call_response: sig(i32s(5), ""),
  proxy_on_grpc_receive_initial_metadata: sig(i32s(3), ""),
  proxy_on_grpc_receive_trailing_metadata: sig(i32s(3), ""),
  proxy_on_grpc_receive: sig(i32s(3), ""),
  proxy_on_grpc_close: sig(i32s(3), ""),
  proxy_on_done: sig(i32s(1)),
  proxy_on_log: sig("i32", ""),
  proxy_on_delete: sig("i32", ""),
  proxy_on_redis_call_response: sig(i32s(4), ""),
};

/** ABI markers; a module must export exactly one, and ours must be 0_2_100. */
export const ABI_MARKERS = ["proxy_abi_version_0_1_0", "proxy_abi_version_0_2_0", "proxy_abi_version_0_2_1", "proxy_abi_version_0_2_100"];
