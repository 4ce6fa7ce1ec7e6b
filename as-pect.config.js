// as-pect runs the specs of the plugin's pure modules (assembly/__tests__/*.spec.ts).
// Specs must not need a host, but a spec that imports a module which (transitively) declares
// `env.proxy_*` imports would fail to link; every such import is stubbed to return status 12
// (Unimplemented), so a spec that accidentally reaches the host sees a failure, not success.
export default {
  // ASP_ONLY=config npm run test:as runs only assembly/__tests__/config.spec.ts.
  entries: process.env.ASP_ONLY ? [`assembly/__tests__/${process.env.ASP_ONLY}.spec.ts`] : ["assembly/__tests__/**/*.spec.ts"],
  include: ["assembly/__tests__/**/*.include.ts"],
  disclude: [/node_modules/],
  async instantiate(memory, createImports, instantiate, binary) {
    const stubs = { memory };
    const wasi = {};
    for (const imp of WebAssembly.Module.imports(new WebAssembly.Module(binary))) {
      if (imp.kind !== "function") continue;
      if (imp.module === "env" && imp.name.startsWith("proxy_")) stubs[imp.name] = () => 12;
      if (imp.module === "wasi_snapshot_preview1") wasi[imp.name] = () => 52;
    }
    return instantiate(binary, createImports({ env: stubs, wasi_snapshot_preview1: wasi }));
  },
  outputBinary: false,
};
