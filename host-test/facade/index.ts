// Public entry of the test facade.
export { TestHost, type TestHostOptions, type StreamSpec, type HostSpec } from "./test-host.js";
export { TestStream, type ForwardedRequest, type OverrideOutcome, type ClientResponse } from "./test-stream.js";
export { RecordedRedisCall, RecordedHttpCall, type HttpCallAnswer } from "./callouts.js";
export type { FacadeRoute } from "./facade-backend.js";
export { HeadersAction, DataAction, WasmResult, BufferType, HeaderMapType, StreamType } from "../abi/constants.js";
