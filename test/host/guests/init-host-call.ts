// @ts-nocheck: AssemblyScript source (compiled by asc, not tsc).
// Module-level code (run by `_initialize`, built with --exportStart) that calls a host function
// cpp-host does not allow there (WasmBase::startVm restricts it to logging, WASI args / environ /
// clock / random): the VM must fail to start, as in Envoy.
import { proxy_log, proxy_set_tick_period_milliseconds } from "./abi";
export { malloc } from "./abi";
const hello = String.UTF8.encode("init");
proxy_log(2, changetype<usize>(hello), hello.byteLength); // allowed
proxy_set_tick_period_milliseconds(1000); // not allowed during _initialize
export function proxy_abi_version_0_2_100(): void {}
export function proxy_on_vm_start(root: u32, size: u32): u32 { return 1; }
export function proxy_on_configure(root: u32, size: u32): u32 { return 1; }
export function proxy_on_context_create(id: u32, parent: u32): void {}
