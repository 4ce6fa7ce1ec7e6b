// @ts-nocheck: AssemblyScript source (compiled by asc, not tsc).
// The scripted guest with the Higress ABI marker (StopIteration keeps body callbacks coming).
export * from "./scripted-core";
export function proxy_abi_version_0_2_100(): void {}
