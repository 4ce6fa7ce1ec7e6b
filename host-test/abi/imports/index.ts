// Assembles the import object for one VM: every env.proxy_* of ABI 0.2.1 that Envoy implements,
// the Higress extensions (only for 0_2_1 / 0_2_100 modules, as the Higress cpp-host fork
// registers them), and the WASI subset. Anything else is an unknown import (module refused).
import { hasHigressImports } from "../abi-version.js";
import type { WasmVm } from "../vm.js";
import { coreImports } from "./env-core.js";
import { httpImports } from "./env-http.js";
import { calloutImports, higressImports } from "./env-callouts.js";
import { sharedImports } from "./env-shared.js";
import { wasiImports } from "./wasi.js";
import type { ImportTable } from "./types.js";

/** Before higress-group/proxy-wasm-cpp-host 27df305 only the Redis calls exist (envoy-profile.ts). */
const HIGRESS_7850D17 = new Set(["proxy_redis_init", "proxy_redis_call"]);

function registeredHigressImports(vm: WasmVm): ImportTable {
  const all = higressImports(vm);
  if (vm.host.options.profile.higressHost === "27df305") return all;
  return Object.fromEntries(Object.entries(all).filter(([name]) => HIGRESS_7850D17.has(name)));
}

/** cpp-host src/wasm.cc registerCallbacks registers these for 0_2_1 / 0_2_100 only (and ABI
 *  0.1.0's continue_request, continue_response, clear_route_cache, get_configuration for 0_1_0
 *  only, so not here at all). */
const ONLY_0_2_1 = ["proxy_get_log_level"];

export function buildImports(vm: WasmVm): Record<string, ImportTable> {
  const env: ImportTable = {
    ...coreImports(vm),
    ...httpImports(vm),
    ...calloutImports(vm),
    ...sharedImports(vm),
    ...(hasHigressImports(vm.abi) ? registeredHigressImports(vm) : {}),
  };
  if (!hasHigressImports(vm.abi)) for (const name of ONLY_0_2_1) delete env[name];
  const wasi = wasiImports(vm);
  return { env, wasi_snapshot_preview1: wasi, wasi_unstable: wasi };
}
