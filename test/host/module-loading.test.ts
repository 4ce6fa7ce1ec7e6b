// Module admission and lifecycle start: ABI marker detection (higress-abi.md: exactly one marker),
// unknown imports refused (Envoy refuses a module whose imports it cannot satisfy), plugin
// start/configure order and configuration rejection (cpp-host onStart/onConfigure).
import { beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { TestHost } from "../../host-test/facade/index.js";
import { detectAbiVersion } from "../../host-test/abi/abi-version.js";
import { buildImports } from "../../host-test/abi/imports/index.js";
import { HOST_IMPORTS } from "../../host-test/abi-table.js";
import { buildGuest } from "./guests/build.js";

let scripted100: string, scripted020: string, twoMarkers: string, unknownImport: string, higress: string;
beforeAll(async () => {
  [scripted100, scripted020, twoMarkers, unknownImport, higress] = await Promise.all([
    buildGuest("scripted-100"), buildGuest("scripted-020"), buildGuest("two-markers"), buildGuest("unknown-import"), buildGuest("higress-100"),
  ]);
});

describe("ABI version marker", () => {
  it("detects 0_2_100 and 0_2_0", () => {
    expect(detectAbiVersion(new WebAssembly.Module(readFileSync(scripted100)))).toEqual({ version: "0_2_100" });
    expect(detectAbiVersion(new WebAssembly.Module(readFileSync(scripted020)))).toEqual({ version: "0_2_0" });
  });

  it("refuses a module with two markers (ambiguous)", async () => {
    await expect(TestHost.create({ wasm: twoMarkers })).rejects.toThrow(/2 ABI markers/);
  });

  it("refuses a module without a marker", async () => {
    // Smallest valid module: no exports at all.
    const empty = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
    await expect(TestHost.create({ wasm: empty })).rejects.toThrow(/no proxy_abi_version/);
  });

  it("a host call cpp-host does not allow during _initialize fails the VM's start (restricted_callback), as in Envoy", async () => {
    const initHostCall = await buildGuest("init-host-call");
    await expect(TestHost.create({ wasm: initHostCall })).rejects.toThrow(/failed to start.*restricted_callback: env\.proxy_set_tick_period_milliseconds/);
  });

  it("refuses unknown imports with the import's name", async () => {
    await expect(TestHost.create({ wasm: unknownImport })).rejects.toThrow(/env\.proxy_does_not_exist/);
  });
});

describe("plugin start", () => {
  it("creates the root context, starts the VM, then configures it, per worker VM", async () => {
    const h = await TestHost.create({ wasm: scripted100, configuration: "a=1", vmConfiguration: "vmc", workers: 2 });
    expect(h.configured).toEqual([true, true]);
    const vm0 = h.logMessages("info", { vm: 0 });
    expect(vm0.slice(0, 3)).toEqual(["create ctx=1 parent=0", "vm_start size=3 vm_config=vmc", "configure status=0 config=a=1"]);
    expect(h.logMessages("info", { vm: 1 }).slice(0, 3)).toEqual(vm0.slice(0, 3));
  });

  it("reports a rejected configuration (proxy_on_configure returned false)", async () => {
    const h = await TestHost.create({ wasm: scripted100, configuration: "reject" });
    expect(h.configured).toEqual([false]);
  });

  it("a JSON object configuration reaches the guest as JSON text (PluginConfiguration buffer)", async () => {
    const h = await TestHost.create({ wasm: scripted100, configuration: { a: [1, 2] } });
    expect(h.logMessages()).toContain('configure status=0 config={"a":[1,2]}');
  });

  it("the Higress imports are available to a 0_2_100 module", async () => {
    const h = await TestHost.create({ wasm: higress, configuration: "redis=outbound|6379||redis.static", redisClusters: ["outbound|6379||redis.static"] });
    expect(h.logMessages()).toContain("redis_init status=0");
  });

  it("a Higress host before proxy-wasm-cpp-host 27df305 (Higress < 2.1.4) refuses a module importing the upstream calls", async () => {
    await expect(TestHost.create({ wasm: higress, profile: { higressHost: "7850d17" } })).rejects.toThrow(
      /unknown import\(s\) env\.proxy_get_upstream_hosts \(function\), env\.proxy_set_upstream_override_host \(function\)/);
  });
});

describe("import table", () => {
  it("ABI 0.1.0's calls are not provided to a 0_2_x module, nor get_log_level to a 0_2_0 one (cpp-host src/wasm.cc registerCallbacks)", async () => {
    const env100 = buildImports((await TestHost.create({ wasm: higress })).vms[0]).env;
    for (const name of ["proxy_continue_request", "proxy_continue_response", "proxy_clear_route_cache", "proxy_get_configuration"]) {
      expect(env100[name], name).toBeUndefined();
    }
    expect(typeof env100.proxy_get_log_level).toBe("function");
    expect(buildImports((await TestHost.create({ wasm: scripted020 })).vms[0]).env.proxy_get_log_level).toBeUndefined();
  });

  it("provides every host function of the shared ABI table (module guests are checked against)", async () => {
    const h = await TestHost.create({ wasm: higress });
    const provided = buildImports(h.vms[0]);
    for (const [mod, fns] of Object.entries(HOST_IMPORTS)) {
      for (const name of Object.keys(fns)) expect(typeof provided[mod]?.[name], `${mod}.${name}`).toBe("function");
    }
  });

  it("does not register the Higress imports for a 0_2_0 module", async () => {
    const h = await TestHost.create({ wasm: scripted020 });
    expect(buildImports(h.vms[0]).env.proxy_redis_call).toBeUndefined();
  });
});
