// Numeric contracts of the Proxy-Wasm ABI v0.2.1 (proxy-wasm/spec abi-versions/v0.2.1) plus the
// Higress additions (higress-abi.md: buffer type 9, status codes). Pure data, no behaviour.

/** Status returned by every host call (spec "Return values"; higress-abi.md "Status codes"). */
export const WasmResult = {
  Ok: 0,
  NotFound: 1,
  BadArgument: 2,
  SerializationFailure: 3,
  ParseFailure: 4,
  BadExpression: 5,
  InvalidMemoryAccess: 6,
  Empty: 7,
  CasMismatch: 8,
  ResultMismatch: 9,
  InternalFailure: 10,
  BrokenConnection: 11,
  Unimplemented: 12,
} as const;
export type WasmResultCode = (typeof WasmResult)[keyof typeof WasmResult];

export const HeaderMapType = {
  RequestHeaders: 0,
  RequestTrailers: 1,
  ResponseHeaders: 2,
  ResponseTrailers: 3,
  GrpcReceiveInitialMetadata: 4,
  GrpcReceiveTrailingMetadata: 5,
  HttpCallResponseHeaders: 6,
  HttpCallResponseTrailers: 7,
} as const;

export const BufferType = {
  HttpRequestBody: 0,
  HttpResponseBody: 1,
  NetworkDownstreamData: 2,
  NetworkUpstreamData: 3,
  HttpCallResponseBody: 4,
  GrpcReceiveBuffer: 5,
  VmConfiguration: 6,
  PluginConfiguration: 7,
  CallData: 8,
  /** Higress: the raw RESP reply, readable only inside proxy_on_redis_call_response. */
  RedisCallResponse: 9,
} as const;

/** Envoy's FilterHeadersStatus numbering as used on the wire by Proxy-Wasm. */
export const HeadersAction = {
  Continue: 0,
  StopIteration: 1,
  ContinueAndEndStream: 2,
  StopAllIterationAndBuffer: 3,
  StopAllIterationAndWatermark: 4,
} as const;

/** Envoy's FilterDataStatus numbering. */
export const DataAction = {
  Continue: 0,
  StopIterationAndBuffer: 1,
  StopIterationAndWatermark: 2,
  StopIterationNoBuffer: 3,
} as const;

/** Envoy's FilterTrailersStatus numbering (cpp-host FilterTrailersStatus). */
export const TrailersAction = {
  Continue: 0,
  StopIteration: 1,
} as const;

export const StreamType = { Request: 0, Response: 1, Downstream: 2, Upstream: 3 } as const;

export const LogLevel = { trace: 0, debug: 1, info: 2, warn: 3, error: 4, critical: 5 } as const;
export type LogLevelName = keyof typeof LogLevel;
export const LOG_LEVEL_NAMES: LogLevelName[] = ["trace", "debug", "info", "warn", "error", "critical"];

export const MetricType = { Counter: 0, Gauge: 1, Histogram: 2 } as const;

/** The ABI version markers a module may export (higress-abi.md "ABI version export"). */
export const ABI_MARKERS = {
  proxy_abi_version_0_2_0: "0_2_0",
  proxy_abi_version_0_2_1: "0_2_1",
  proxy_abi_version_0_2_100: "0_2_100",
} as const;
export type AbiVersion = (typeof ABI_MARKERS)[keyof typeof ABI_MARKERS];

/**
 * Envoy StreamInfo::ResponseFlag bits (envoy/stream_info/stream_info.h), exposed as the
 * `response.flags` property (a uint64 bit vector), with the short names used in access logs.
 */
export const ResponseFlag = {
  LH: 0x1, // FailedLocalHealthCheck
  UH: 0x2, // NoHealthyUpstream
  UT: 0x4, // UpstreamRequestTimeout
  LR: 0x8, // LocalReset (Envoy reset the stream itself)
  UR: 0x10, // UpstreamRemoteReset
  UF: 0x20, // UpstreamConnectionFailure
  UC: 0x40, // UpstreamConnectionTermination
  UO: 0x80, // UpstreamOverflow
  NR: 0x100, // NoRouteFound
  DC: 0x4000, // DownstreamConnectionTermination
  NC: 0x1000000, // NoClusterFound
  DPE: 0x40000, // DownstreamProtocolError (e.g. a filter wrote an invalid request header)
} as const;
export type ResponseFlagName = keyof typeof ResponseFlag;
