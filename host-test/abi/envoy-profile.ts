// Which Higress/Envoy behaviour the host emulates where versions or listeners differ. The default
// is the production Higress gateway (strict); every alternative is an explicit option a test opts
// into. Sources are those of ../shared/reference/host-fidelity-audit.md (one row each below).
// Pure data, no behaviour.

export interface EnvoyProfile {
  /**
   * Row 1. Downstream per-stream buffer limit for the *AndBuffer statuses. Higress sets
   * `per_connection_buffer_limit_bytes` to 32768 (higress helm/core/values.yaml ~L719,
   * pkg/ingress/kube/configmap/global.go L45/L630); a filter raises it per stream with the property
   * `set_decoder_buffer_limit` (Higress envoy context.cc setProperty; wasm-go
   * SetRequestBodyBufferLimit). Over the limit: 413 on requests, 500 on responses
   * (envoy filter_manager.cc requestDataTooLarge / responseDataTooLarge).
   */
  bufferLimitBytes: number;
  /**
   * Row 2. "log-first": HTTP/1 and HTTP/2, where ConnectionManagerImpl::doDeferredStreamDestroy
   * runs the access log (proxy_on_log) before destroyFilters (proxy_on_done, proxy_on_delete).
   * "deferred-log": HTTP/3 with deferred logging: on_log arrives after on_delete.
   */
  endOrder: "log-first" | "deferred-log";
  /**
   * Row 5. "1.32": the buffered body seen in a data callback includes the current chunk (envoy
   * PR #36411, Envoy >= 1.32, Higress 2.2). "pre-1.32": Envoy 1.27 (Higress 2.1.x) shows the
   * decoding buffer WITHOUT the current chunk while the filter buffers (envoy issues #35884,
   * #36227; context.cc getBuffer returns decodingBuffer() when buffering_request_body_).
   */
  bodyView: "1.32" | "pre-1.32";
  /**
   * Row 8. After a trap, Higress re-creates the VM on a later stream of the same worker, at most
   * once per this interval (Higress envoy wasm_filter.h HIGRESS block; cpp-host wasm.cc
   * setWasmRecoverCallback/setPluginRecoverCallback: clone, initialize, start, configure).
   * 0 disables recovery (upstream Envoy: a failed VM stays failed).
   */
  vmRecoveryIntervalMs: number;
  /**
   * Row 3. What proxy_redis_init does to the worker's shared client of that cluster when it is
   * initialised again. "always-close": AsyncClientImpl::initialize closes every connection
   * (in-flight calls fail with NetworkError) and replaces AUTH, db, timeout (Higress < 2.2.4).
   * "close-if-changed": higress-group/envoy#29 (Higress 2.2.4, PR #4104) skips the close when the
   * configuration is unchanged.
   */
  redisReinit: "always-close" | "close-if-changed";
  /**
   * Row 4. Whether the init's query parameters `buffer_flush_timeout` / `max_buffer_size_before_flush`
   * are read (Higress 2.1.9, PR #3126: AsyncClientConfig parseUint32FromParams) or ignored
   * (older: always 3 ms / 1024 bytes).
   */
  redisFlushParams: "honoured" | "ignored";
  /**
   * Row 6. Which Higress proxy-wasm host registers the Higress imports (0_2_1 / 0_2_100 modules):
   * "27df305" (higress-group/proxy-wasm-cpp-host, 2025-06-04; Higress >= 2.1.4) registers
   * proxy_redis_init, proxy_redis_call, proxy_inject_encoded_data_to_filter_chain,
   * proxy_set_upstream_override_host and proxy_get_upstream_hosts; "7850d17" (older Higress) only
   * the two Redis calls, so a module importing the others is refused (src/wasm.cc registerCallbacks).
   */
  higressHost: "27df305" | "7850d17";
}

/** Higress 2.2's Envoy on HTTP/1.1 or HTTP/2, with its default gateway settings. */
export const HIGRESS_PROFILE: EnvoyProfile = {
  bufferLimitBytes: 32 * 1024,
  endOrder: "log-first",
  bodyView: "1.32",
  vmRecoveryIntervalMs: 5000,
  redisReinit: "always-close",
  redisFlushParams: "honoured",
  higressHost: "27df305",
};

/** Envoy's Redis raw client batching defaults (raw_client_impl.cc makeRawRequest; AsyncClientConfig). */
export const REDIS_FLUSH_DEFAULTS = { bufferFlushTimeoutMs: 3, maxBufferSizeBeforeFlush: 1024 } as const;

/** proxy_redis_call on a cluster nobody initialised uses the client's default op timeout (audit row 12). */
export const REDIS_DEFAULT_TIMEOUT_MS = 1000;
