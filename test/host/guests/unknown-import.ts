// @ts-nocheck: AssemblyScript source (compiled by asc, not tsc).
// A module importing a function Envoy does not provide: instantiation must be refused.
@external("env", "proxy_does_not_exist") declare function proxy_does_not_exist(): u32;
export { malloc } from "./abi";
export function proxy_abi_version_0_2_100(): void {}
export function proxy_on_vm_start(root: u32, size: u32): u32 { return proxy_does_not_exist(); }
