// The "Envoy process" side of one Wasm plugin: compiles the module once, runs one VM per worker
// (state per VM), starts and configures each root context, and owns the per-process registries
// (metrics, shared data, shared queues, logs). Streams are created here, bound to a VM.
// Sources: proxy-wasm-cpp-host src/wasm.cc (one base module, a clone per thread; start then
// configure); higress-abi.md. Failure behaviour: load() rejects when the module is refused
// (no/ambiguous ABI marker, unknown import, start trap); a rejected configuration is reported in
// `configured[i] === false` (the VM stays up, as Envoy keeps serving with the filter failing).
import { readFile } from "node:fs/promises";
import { detectAbiVersion } from "./abi-version.js";
import type { AbiVersion, LogLevelName } from "./constants.js";
import type { HostBackend } from "./backend.js";
import { LogSink, type LogRecord } from "./logs.js";
import { MetricsRegistry } from "./metrics.js";
import { SharedData, SharedQueues } from "./shared-data.js";
import { HttpStream, type StreamFacts, type StreamSink } from "./stream.js";
import { WasmVm } from "./vm.js";

export interface PluginOptions {
  /** Number of VMs (one per Envoy worker thread). */
  workers: number;
  rootId: string;
  pluginName: string;
  vmId: string;
  vmConfiguration: string;
  /** The plugin configuration (JSON text as Higress delivers it). */
  configuration: string;
  logLevel: LogLevelName;
  /** Envoy `fail_open`: false (default) answers 503 when the VM has failed. */
  failOpen: boolean;
  /** Envoy per-stream buffer limit used by the *AndBuffer statuses (default 1 MiB, Envoy's default). */
  bufferLimitBytes: number;
  nodeId: string;
  /** Optional live echo of every accepted log record. */
  logEcho: ((r: LogRecord) => void) | null;
  /** Tag names the gateway's bootstrap turns into labels (Istio/Higress `extraStatTags`, see metrics.ts). */
  extraStatTags: readonly string[];
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
  bufferLimitBytes: 1024 * 1024,
  nodeId: "host-test",
  logEcho: null,
  extraStatTags: LLMLB_STAT_TAGS,
};

export class PluginHost {
  readonly vms: WasmVm[] = [];
  readonly configured: boolean[] = [];
  readonly metrics: MetricsRegistry;
  readonly sharedData = new SharedData();
  readonly queues = new SharedQueues();
  readonly logs: LogSink;
  private nextVm = 0;

  private constructor(readonly backend: HostBackend, readonly options: PluginOptions, readonly abi: AbiVersion) {
    this.logs = new LogSink(options.logLevel, options.logEcho);
    this.metrics = new MetricsRegistry(options.extraStatTags);
  }

  static async load(wasm: Uint8Array | string, backend: HostBackend, options: Partial<PluginOptions> = {}): Promise<PluginHost> {
    const bytes = typeof wasm === "string" ? await readFile(wasm) : wasm;
    const module = await WebAssembly.compile(new Uint8Array(bytes));
    const detected = detectAbiVersion(module);
    if ("error" in detected) throw new Error(`Wasm module refused: ${detected.error}`);
    const host = new PluginHost(backend, { ...DEFAULT_PLUGIN_OPTIONS, ...options }, detected.version);
    for (let i = 0; i < host.options.workers; i++) {
      const vm = new WasmVm(i, host, module, detected.version);
      vm.instantiate();
      host.vms.push(vm);
      const started = vm.root.start(Buffer.from(host.options.vmConfiguration, "utf8"));
      host.configured.push(started && vm.root.configure(Buffer.from(host.options.configuration, "utf8")));
    }
    return host;
  }

  /** Round-robin VM choice, like Envoy spreading connections over workers. */
  pickVm(): number {
    const i = this.nextVm;
    this.nextVm = (this.nextVm + 1) % this.vms.length;
    return i;
  }

  newStream(vmIndex: number, sink: StreamSink, facts: StreamFacts): HttpStream {
    return new HttpStream(this.vms[vmIndex], sink, facts);
  }

  /** Calls refused by failed VMs, summed. */
  get refusedCalls(): number { return this.vms.reduce((n, vm) => n + vm.refusedCalls, 0); }

  shutdown(): void { for (const vm of this.vms) vm.root?.stopTicks(); }
}
