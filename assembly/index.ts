// The module's exports: the Proxy-Wasm 0.2.1 callbacks from @solo-io/proxy-runtime's glue, the
// allocator the host uses (malloc/free), exactly ONE ABI marker, proxy_abi_version_0_2_100 (the
// SDK's proxy_abi_version_0_2_0 is deliberately not re-exported: under 0_2_0 Envoy would convert
// our StopIteration into StopAllIterationAndWatermark and the body-based policies would never see
// a body; higress-abi.md), and Higress's proxy_on_redis_call_response.
// The end-of-context callbacks are guarded: Envoy on HTTP/3 with deferred logging calls
// proxy_on_log AFTER proxy_on_delete (host-test/README.md row 2), and the SDK's lookup of a
// deleted context would abort the VM; a callback for a context that is not alive does nothing.
import { registerRootContext, RootContext } from "@solo-io/proxy-runtime/assembly/index";
import {
  proxy_on_context_create as sdkContextCreate, proxy_on_done as sdkDone, proxy_on_log as sdkLog, proxy_on_delete as sdkDelete,
} from "@solo-io/proxy-runtime/assembly/exports";
import { LbRoot, roots } from "./filter/root";

export { malloc, free } from "@solo-io/proxy-runtime/assembly/malloc";
export {
  proxy_on_vm_start, proxy_validate_configuration, proxy_on_configure, proxy_on_tick,
  proxy_on_request_headers, proxy_on_request_body, proxy_on_request_trailers,
  proxy_on_response_headers, proxy_on_response_body, proxy_on_response_trailers,
  proxy_on_http_call_response,
} from "@solo-io/proxy-runtime/assembly/exports";

/** Contexts created and not yet deleted (root and stream). */
const alive = new Set<u32>();

export function proxy_on_context_create(contextId: u32, rootContextId: u32): void {
  alive.add(contextId);
  sdkContextCreate(contextId, rootContextId);
}

export function proxy_on_done(contextId: u32): u32 {
  return alive.has(contextId) ? sdkDone(contextId) : 1;
}

export function proxy_on_log(contextId: u32): void {
  if (alive.has(contextId)) sdkLog(contextId);
}

export function proxy_on_delete(contextId: u32): void {
  if (!alive.has(contextId)) return;
  alive.delete(contextId);
  sdkDelete(contextId);
}

export function proxy_abi_version_0_2_100(): void {}

export function proxy_on_redis_call_response(rootContextId: u32, token: u32, status: u32, responseSize: u32): void {
  if (!roots.has(rootContextId)) return;
  roots.get(rootContextId).onRedisResponse(token, status, responseSize);
}

/** A shared queue's items (a sibling VM's wake): only for a live root (the SDK's lookup of a gone one aborts). */
export function proxy_on_queue_ready(rootContextId: u32, token: u32): void {
  if (!roots.has(rootContextId)) return;
  roots.get(rootContextId).onQueueReady(token);
}

registerRootContext((id: u32): RootContext => new LbRoot(id) as RootContext, "");
