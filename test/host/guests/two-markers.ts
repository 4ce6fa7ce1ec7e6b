// @ts-nocheck: AssemblyScript source (compiled by asc, not tsc).
// A module with two ABI markers: the host must refuse it (ambiguous, higress-abi.md).
export * from "./scripted-core";
export function proxy_abi_version_0_2_0(): void {}
export function proxy_abi_version_0_2_100(): void {}
