// The built plugin must load in Higress's Envoy: every import must be a host function Higress
// provides with exactly that signature, every export a callback the host knows, and the module
// must carry exactly one ABI marker, proxy_abi_version_0_2_100 (higress-abi.md: under 0_2_0 the
// body-based policies would never see a body; two markers are ambiguous).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { HOST_IMPORTS, MODULE_EXPORTS, ABI_MARKERS } from "../../host-test/abi-table.js";
import { readWasmInterface, type WasmInterface } from "../helpers/wasm-signatures.js";

const BUILDS = ["build/ai-load-balancer.wasm", "build/ai-load-balancer.debug.wasm"];

describe.each(BUILDS)("%s", (path) => {
  let iface: WasmInterface;
  it("parses", async () => {
    iface = await readWasmInterface(readFileSync(path));
    expect(iface.imports.length).toBeGreaterThan(0);
  });

  it("imports only functions Higress provides, with their exact signatures", () => {
    for (const imp of iface.imports) {
      expect(imp.kind, `${imp.module}.${imp.name}`).toBe("func");
      const expected = HOST_IMPORTS[imp.module]?.[imp.name];
      expect(expected, `unknown import ${imp.module}.${imp.name}`).toBeDefined();
      expect(imp.sig, `${imp.module}.${imp.name}`).toEqual(expected);
    }
  });

  it("uses the Higress Redis and upstream-override imports", () => {
    const names = iface.imports.map((i) => i.name);
    for (const n of ["proxy_redis_init", "proxy_redis_call", "proxy_get_upstream_hosts", "proxy_set_upstream_override_host"]) {
      expect(names).toContain(n);
    }
  });

  it("exports only known callbacks, with their exact signatures", () => {
    for (const exp of iface.exports) {
      if (exp.kind === "memory") { expect(exp.name).toBe("memory"); continue; }
      expect(exp.kind, exp.name).toBe("func");
      const expected = MODULE_EXPORTS[exp.name];
      expect(expected, `unexpected export ${exp.name}`).toBeDefined();
      expect(exp.sig, exp.name).toEqual(expected);
    }
  });

  it("exports exactly one ABI marker: proxy_abi_version_0_2_100", () => {
    const markers = iface.exports.filter((e) => ABI_MARKERS.includes(e.name)).map((e) => e.name);
    expect(markers).toEqual(["proxy_abi_version_0_2_100"]);
  });

  it("exports what the host needs to drive it", () => {
    const names = iface.exports.map((e) => e.name);
    for (const n of ["memory", "malloc", "proxy_on_context_create", "proxy_on_configure", "proxy_on_request_headers",
      "proxy_on_request_body", "proxy_on_response_headers", "proxy_on_log", "proxy_on_done", "proxy_on_delete",
      "proxy_on_tick", "proxy_on_redis_call_response"]) {
      expect(names).toContain(n);
    }
  });
});
