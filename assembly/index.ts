// The module's exports: the Proxy-Wasm 0.2.1 callbacks from @solo-io/proxy-runtime's glue, the
// allocator the host uses (malloc/free), exactly ONE ABI marker, proxy_abi_version_0_2_100 (the
// SDK's proxy_abi_version_0_2_0 is deliberately not re-exported: under 0_2_0 Envoy would convert
// our StopIteration into StopAllIterationAndWatermark and the body-based policies would never see
// a body; higress-abi.md), and Higress's proxy_on_redis_call_response.
import { registerRootContext, RootContext } from "@solo-io/proxy-runtime/assembly/index";
import { LbRoot, roots } from "./filter/root";

export { malloc, free } from "@solo-io/proxy-runtime/assembly/malloc";
export {
  proxy_on_vm_start, proxy_validate_configuration, proxy_on_configure, proxy_on_tick,
  proxy_on_context_create, proxy_on_request_headers, proxy_on_request_body, proxy_on_request_trailers,
  proxy_on_response_headers, proxy_on_response_body, proxy_on_response_trailers,
  proxy_on_http_call_response, proxy_on_queue_ready, proxy_on_done, proxy_on_log, proxy_on_delete,
} from "@solo-io/proxy-runtime/assembly/exports";

export function proxy_abi_version_0_2_100(): void {}

export function proxy_on_redis_call_response(rootContextId: u32, token: u32, status: u32, responseSize: u32): void {
  if (!roots.has(rootContextId)) return;
  roots.get(rootContextId).onRedisResponse(token, status, responseSize);
}

registerRootContext((id: u32): RootContext => new LbRoot(id) as RootContext, "");
