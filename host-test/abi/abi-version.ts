// ABI version detection and the host-side conversion of filter statuses.
// Sources: higress-abi.md "ABI version export"; proxy-wasm-cpp-host src/context.cc
// convertVmCallResultToFilter{Headers,Data,Trailers}Status. Failure behaviour: detectAbiVersion returns an
// error message (the module is refused, as Envoy refuses it) instead of throwing.
import { ABI_MARKERS, DataAction, HeadersAction, TrailersAction, type AbiVersion } from "./constants.js";

export function detectAbiVersion(module: WebAssembly.Module): { version: AbiVersion } | { error: string } {
  const markers = WebAssembly.Module.exports(module)
    .map((e) => e.name)
    .filter((n): n is keyof typeof ABI_MARKERS => n in ABI_MARKERS);
  if (markers.length === 0) {
    return { error: "module exports no proxy_abi_version_* marker (expected exactly one of 0_2_0, 0_2_1, 0_2_100)" };
  }
  if (markers.length > 1) {
    // The Higress host takes the first marker it finds, so two markers make the semantics ambiguous.
    return { error: `module exports ${markers.length} ABI markers (${markers.join(", ")}); exactly one is required` };
  }
  return { version: ABI_MARKERS[markers[0]] };
}

/** Whether the Higress imports (redis, upstream hosts, override) are registered for this version. */
export function hasHigressImports(v: AbiVersion): boolean {
  return v === "0_2_1" || v === "0_2_100";
}

/**
 * Header status as the filter manager sees it. A local reply sent during the callback
 * (stopNextIteration) or an out-of-range value becomes StopAllIterationAndWatermark. Under
 * 0_2_0/0_2_1 StopIteration is also converted to StopAllIterationAndWatermark (cpp-host); only
 * the Higress 0_2_100 keeps StopIteration (headers held, body callbacks keep coming).
 */
export function convertHeadersStatus(raw: number, abi: AbiVersion, stopNextIteration: boolean): number {
  if (stopNextIteration || raw > HeadersAction.StopAllIterationAndWatermark || raw < 0) {
    return HeadersAction.StopAllIterationAndWatermark;
  }
  if (raw === HeadersAction.StopIteration && abi !== "0_2_100") return HeadersAction.StopAllIterationAndWatermark;
  return raw;
}

/** Data status: a local reply or an out-of-range value becomes StopIterationNoBuffer (cpp-host). */
export function convertDataStatus(raw: number, stopNextIteration: boolean): number {
  if (stopNextIteration || raw > DataAction.StopIterationNoBuffer || raw < 0) return DataAction.StopIterationNoBuffer;
  return raw;
}

/** Trailers status: a local reply or an out-of-range value becomes StopIteration (cpp-host). */
export function convertTrailersStatus(raw: number, stopNextIteration: boolean): number {
  if (stopNextIteration || raw > TrailersAction.StopIteration || raw < 0) return TrailersAction.StopIteration;
  return raw;
}
