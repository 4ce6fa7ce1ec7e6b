// @ts-nocheck: AssemblyScript source (compiled by asc, not tsc).
// The scripted guest with the 0_2_0 marker (StopIteration becomes StopAllIterationAndWatermark).
export * from "./scripted-core";
export function proxy_abi_version_0_2_0(): void {}
