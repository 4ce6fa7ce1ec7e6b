// The "Envoy process" side of one Wasm plugin: compiles the module once, runs one VM per worker
// (state per VM), starts and configures each root context, and owns the per-process registries
// (metrics, shared data, shared queues, logs). Streams are created here, bound to a VM.
// Sources: proxy-wasm-cpp-host src/wasm.cc (one base module, a clone per thread; start then
// configure); higress-abi.md.
// Configuration update (audit row 9): updateConfiguration() starts a new root context on every
// live VM (same VM, same state) and drains the old root (root-context.ts).
// VM recovery (audit row 8): a failed VM is replaced by a fresh one (instantiate, start,
// configure with the current configuration, so redis_init runs again) when a later stream arrives
// on that worker, at most once per profile.vmRecoveryIntervalMs per worker (Higress envoy
// wasm_filter.h HIGRESS block; cpp-host wasm.cc setWasmRecoverCallback +
// setPluginRecoverCallback). Streams already on the failed VM stay there (and fail closed).
// Failure behaviour: load() rejects when the module is refused
// (no/ambiguous ABI marker, unknown import, start trap); a rejected configuration is reported in
// `configured[i] === false` (the VM stays up, as Envoy keeps serving with the filter failing).
import { capMemory } from "./memory-limit.js";
import { readFile } from "node:fs/promises";
import { detectAbiVersion } from "./abi-version.js";
import type { AbiVersion, LogLevelName } from "./constants.js";
import type { HostBackend } from "./backend.js";
import { LogSink, type LogRecord } from "./logs.js";
import { MetricsRegistry } from "./metrics.js";
import { SharedData, SharedQueues, type SharedDataStore } from "./shared-data.js";
import { HttpStream, type StreamFacts, type StreamSink } from "./stream.js";
import { WasmVm } from "./vm.js";
import { HIGRESS_PROFILE, type EnvoyProfile } from "./envoy-profile.js";

export interface PluginOptions {
  /** Number of VMs (one per Envoy worker thread). */
  workers: number;
  rootId: string;
  pluginName: string;
  vmId: string;
  vmConfiguration: string;
  /** The plugin configuration (JSON text as Higress delivers it), or raw bytes: Envoy hands a
   *  BytesValue configuration to the VM as it is (source/extensions/common/wasm/plugin.cc
   *  anyToBytes), invalid UTF-8 included. */
  configuration: string | Buffer;
  logLevel: LogLevelName;
  /** Envoy `fail_open`: false (default) answers 503 when the VM has failed. */
  failOpen: boolean;
  /** Version/listener-dependent Envoy behaviour (envoy-profile.ts); default: Higress 2.2, HTTP/1. */
  profile: EnvoyProfile;
  nodeId: string;
  /** Optional live echo of every accepted log record. */
  logEcho: ((r: LogRecord) => void) | null;
  /** Tag names the gateway's bootstrap turns into labels (Istio/Higress `extraStatTags`, see metrics.ts). */
  extraStatTags: readonly string[];
  /** The shared data the VMs reach; null: this plugin's own. Envoy's is one per process and
   *  vm_id, shared by every plugin (cpp-host src/shared_data.cc; Higress sets no vm_id), so the
   *  gateway and the facade give every plugin of one Envoy the same store. Benchmarks may give
   *  another (bench/virtual/replica-shared-data.ts: a what-if). */
  sharedData: SharedDataStore | null;
  /** The shared queues; null: this plugin's own. As shared data: one per process and vm_id
   *  (cpp-host src/shared_queue.cc), so one per Envoy in the gateway and the facade. */
  sharedQueues: SharedQueues | null;
}

/** The `extraStatTags` README's deployment section asks for: the labels of the plugin's stats. */
export const LLMLB_STAT_TAGS: readonly string[] = ["policy", "reason", "priority", "kind"];

export const DEFAULT_PLUGIN_OPTIONS: PluginOptions = {
  workers: 1,
  rootId: "",
  pluginName: "llm-lb",
  vmId: "",
  vmConfiguration: "",
  configuration: "",
  logLevel: "info",
  failOpen: false,
  profile: HIGRESS_PROFILE,
  nodeId: "host-test",
  logEcho: null,
  extraStatTags: LLMLB_STAT_TAGS,
  sharedData: null,
  sharedQueues: null,
};

export class PluginHost {
  readonly vms: WasmVm[] = [];
  readonly configured: boolean[] = [];
  readonly metrics: MetricsRegistry;
  readonly sharedData: SharedDataStore;
  readonly queues: SharedQueues;
  readonly logs: LogSink;
  /** VMs re-created after a failure (all workers). */
  recoveries = 0;
  private nextVm = 0;
  private readonly lastRecoveryAt: number[] = [];

  private constructor(readonly backend: HostBackend, readonly options: PluginOptions, readonly abi: AbiVersion,
    private readonly module: WebAssembly.Module) {
    this.logs = new LogSink(options.logLevel, options.logEcho);
    this.metrics = new MetricsRegistry(options.extraStatTags);
    this.sharedData = options.sharedData ?? new SharedData();
    this.queues = options.sharedQueues ?? new SharedQueues();
  }

  static async load(wasm: Uint8Array | string, backend: HostBackend, options: Partial<PluginOptions> = {}): Promise<PluginHost> {
    const bytes = typeof wasm === "string" ? await readFile(wasm) : wasm;
    // Envoy's 1 GiB cap on a VM's memory (memory-limit.ts): a grow past it fails, as there.
    const module = await WebAssembly.compile(capMemory(new Uint8Array(bytes)));
    const detected = detectAbiVersion(module);
    if ("error" in detected) throw new Error(`Wasm module refused: ${detected.error}`);
    const host = new PluginHost(backend, { ...DEFAULT_PLUGIN_OPTIONS, ...options }, detected.version, module);
    for (let i = 0; i < host.options.workers; i++) {
      const vm = new WasmVm(i, host, module, detected.version);
      vm.instantiate();
      host.vms.push(vm);
      host.lastRecoveryAt.push(-Infinity);
      host.configured.push(host.startRoot(vm));
    }
    return host;
  }

  private startRoot(vm: WasmVm): boolean {
    const started = vm.root.start(Buffer.from(this.options.vmConfiguration, "utf8"));
    const c = this.options.configuration;
    return started && vm.root.configure(Buffer.isBuffer(c) ? c : Buffer.from(c, "utf8"));
  }

  /** A new plugin configuration: a new root context on each live VM; old roots drain. */
  updateConfiguration(configuration: string): boolean[] {
    this.options.configuration = configuration;
    this.vms.forEach((vm, i) => {
      if (vm.failed) { this.configured[i] = false; return; }
      const old = vm.root;
      vm.addRoot();
      this.configured[i] = this.startRoot(vm);
      old.drain();
    });
    return this.configured;
  }

  /** Root contexts alive (not deleted) on the current VMs: 1 per VM once old ones drained. */
  get liveRoots(): number { return this.vms.reduce((n, vm) => n + vm.liveRoots(), 0); }

  private maybeRecover(i: number): void {
    const failed = this.vms[i];
    const interval = this.options.profile.vmRecoveryIntervalMs;
    if (!failed.failed || interval <= 0) return;
    const now = this.backend.now();
    if (now - this.lastRecoveryAt[i] < interval) return;
    this.lastRecoveryAt[i] = now;
    const vm = new WasmVm(i, this, this.module, this.abi);
    try {
      vm.instantiate();
    } catch (e) {
      this.logs.write({ vm: i, contextId: 0, level: "critical", message: `Wasm VM recovery failed: ${(e as Error).message}` });
      return;
    }
    const configured = this.startRoot(vm);
    if (vm.failed) return;
    failed.root.stopTicks();
    this.vms[i] = vm;
    this.configured[i] = configured;
    this.recoveries++;
    this.logs.write({ vm: i, contextId: 0, level: "info", message: "Wasm VM recovered" });
  }

  /** Round-robin VM choice, like Envoy spreading connections over workers. */
  pickVm(): number {
    const i = this.nextVm;
    this.nextVm = (this.nextVm + 1) % this.vms.length;
    return i;
  }

  newStream(vmIndex: number, sink: StreamSink, facts: StreamFacts): HttpStream {
    this.maybeRecover(vmIndex);
    return new HttpStream(this.vms[vmIndex], sink, facts);
  }

  /** Calls refused by failed VMs, summed. */
  get refusedCalls(): number { return this.vms.reduce((n, vm) => n + vm.refusedCalls, 0); }

  shutdown(): void { for (const vm of this.vms) vm.root?.stopTicks(); }
}
