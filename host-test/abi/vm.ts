// One Wasm VM (one per Envoy worker thread): the instance, its contexts, and the rules for calling
// into it. Sources: proxy-wasm-cpp-host src/wasm.cc + src/context.cc (SaveRestoreContext resets the
// effective context at every host->VM call; DeferAfterCallActions runs deferred actions and clears
// stopNextIteration after each callback; a trap or proc_exit fails the VM, after which callbacks
// are no longer delivered).
// Failure behaviour: a guest trap marks the VM failed (logged at critical, counted); every later
// call into it is refused and counted in `refusedCalls`. Nothing here throws at runtime except
// instantiation errors, which reject plugin creation (Envoy refuses the module).
import { MALLOC_ALLOWED, START_ALLOWED, restrictable } from "./restricted-calls.js";
import type { AbiVersion } from "./constants.js";
import { GuestMemory } from "./memory.js";
import type { PluginHost } from "./plugin-host.js";
import { RootContext } from "./root-context.js";
import type { HttpStream } from "./stream.js";
import { buildImports } from "./imports/index.js";
import { ProcExit } from "./proc-exit.js";

export type GuestContext = RootContext | HttpStream;

export type InvokeResult = { ok: true; value: number } | { ok: false; reason: "failed" | "missing" | "trap" };

export class WasmVm {
  instance!: WebAssembly.Instance;
  readonly memory: GuestMemory;
  failed = false;
  /** While set, only these imports may be called (restricted-calls.ts: `_initialize`, malloc). */
  restricted: ReadonlySet<string> | null = null;
  failureReason = "";
  /** Calls refused because the VM had failed (Envoy keeps counting them as wasm failures). */
  refusedCalls = 0;
  /** Set by proxy_send_local_response; read when converting the callback's status. */
  stopNextIteration = false;
  readonly contexts = new Map<number, GuestContext>();
  root!: RootContext;

  private currentContextId = 0;
  private effectiveContextId = 0;
  private depth = 0;
  private afterCallActions: Array<() => void> = [];
  private holdDrain = 0;
  private draining = false;
  private nextContextIdValue = 1;
  private nextCalloutIndex = 1;

  constructor(
    readonly index: number,
    readonly host: PluginHost,
    readonly module: WebAssembly.Module,
    readonly abi: AbiVersion,
  ) {
    this.memory = new GuestMemory(
      () => this.instance.exports.memory as WebAssembly.Memory,
      (size) => this.allocate(size),
    );
  }

  /** Instantiates the module; throws (load-time only) when an import is unknown. */
  instantiate(): void {
    const imports = restrictable(buildImports(this), () => this.restricted);
    const missing = WebAssembly.Module.imports(this.module)
      .filter((imp) => imp.kind !== "function" || !(imports[imp.module] && imp.name in imports[imp.module]))
      .map((imp) => `${imp.module}.${imp.name} (${imp.kind})`);
    if (missing.length) {
      throw new Error(`Wasm module refused: unknown import(s) ${missing.join(", ")} (not provided by Envoy/Higress)`);
    }
    try {
      this.instance = new WebAssembly.Instance(this.module, imports as WebAssembly.Imports);
    } catch (e) {
      throw new Error(`Wasm module failed to start: ${(e as Error).message}`);
    }
    if (!(this.instance.exports.memory instanceof WebAssembly.Memory)) {
      throw new Error("Wasm module refused: it does not export `memory`");
    }
    // WASI reactor/command initialisation runs before any proxy_on_* call (cpp-host WasmBase::start).
    const init = (this.instance.exports._initialize ?? this.instance.exports._start) as unknown;
    if (typeof init === "function") {
      this.restricted = START_ALLOWED;
      let r;
      try {
        r = this.invoke(typeof this.instance.exports._initialize === "function" ? "_initialize" : "_start", 0, []);
      } finally {
        this.restricted = null;
      }
      if (!r.ok && this.failed) throw new Error(`Wasm module failed to start: ${this.failureReason}`);
    }
    this.addRoot();
  }

  allocContextId(): number { return this.nextContextIdValue++; }

  /** A new root context for a new plugin configuration; it becomes the root of new streams. */
  addRoot(): RootContext {
    this.root = new RootContext(this.allocContextId(), this);
    this.contexts.set(this.root.id, this.root);
    return this.root;
  }

  liveRoots(): number {
    let n = 0;
    for (const c of this.contexts.values()) if (c.kind === "root") n++;
    return n;
  }

  /** Callout tokens advance in steps of 4; `kind` is the residue (Higress: redis = 3 mod 4). */
  allocCalloutToken(kind: 0 | 1 | 2 | 3): number { return (this.nextCalloutIndex++ << 2) | kind; }

  hasExport(name: string): boolean { return typeof this.instance.exports[name] === "function"; }

  /** The root context `ctx` belongs to (a stream's parent root; cpp-host ContextBase::root_context()). */
  rootOf(ctx: GuestContext | undefined): RootContext {
    if (!ctx) return this.root;
    return ctx.kind === "root" ? ctx : ctx.parentRoot;
  }

  /** The context host calls act on: the effective one if set and still alive, else the current one. */
  activeContext(): GuestContext | undefined {
    if (this.effectiveContextId !== 0) {
      const eff = this.contexts.get(this.effectiveContextId);
      if (eff) return eff;
    }
    return this.contexts.get(this.currentContextId);
  }

  /** proxy_set_effective_context: unknown/finished id -> BadArgument (cpp-host exports.cc). */
  setEffectiveContext(id: number): boolean {
    if (!this.contexts.has(id)) return false;
    this.effectiveContextId = id;
    return true;
  }

  /** Queue an action to run once the outermost callback has returned (cpp-host addAfterVmCallAction). */
  deferAfterCall(action: () => void): void { this.afterCallActions.push(action); }

  /**
   * Raw call into an export with the current context set (and the effective context reset)
   * for its duration.
   */
  invoke(name: string, contextId: number, args: Array<number | bigint>): InvokeResult {
    if (this.failed) { this.refusedCalls++; return { ok: false, reason: "failed" }; }
    const fn = this.instance.exports[name];
    if (typeof fn !== "function") return { ok: false, reason: "missing" };
    const savedCurrent = this.currentContextId;
    const savedEffective = this.effectiveContextId;
    this.currentContextId = contextId;
    this.effectiveContextId = 0;
    this.depth++;
    try {
      const v = (fn as (...a: Array<number | bigint>) => unknown)(...args);
      return { ok: true, value: typeof v === "bigint" ? Number(v) : typeof v === "number" ? v : 0 };
    } catch (e) {
      this.fail(e instanceof ProcExit ? `proc_exit(${e.code}) called in ${name}` : `trap in ${name}: ${(e as Error).message}`);
      return { ok: false, reason: "trap" };
    } finally {
      this.depth--;
      this.currentContextId = savedCurrent;
      this.effectiveContextId = savedEffective;
    }
  }

  /**
   * A proxy_on_* callback: invoke, let `apply` interpret the result while stopNextIteration is
   * still visible, then clear it and run the deferred actions (DeferAfterCallActions).
   */
  callback(name: string, contextId: number, args: Array<number | bigint>, apply?: (r: InvokeResult, stopNext: boolean) => void): InvokeResult {
    const r = this.invoke(name, contextId, args);
    const stopNext = this.stopNextIteration;
    if (this.depth === 0) this.stopNextIteration = false;
    apply?.(r, stopNext);
    if (this.depth === 0 && this.holdDrain === 0) this.drainAfterCallActions();
    return r;
  }

  /**
   * Runs a host step (e.g. feeding headers through the filter and applying the returned status)
   * and only then the actions the guest deferred during it. So a continue issued inside a
   * callback acts on the state the callback's own status produced.
   */
  withDeferredActions<T>(step: () => T): T {
    this.holdDrain++;
    try {
      return step();
    } finally {
      this.holdDrain--;
      if (this.holdDrain === 0 && this.depth === 0) this.drainAfterCallActions();
    }
  }

  private drainAfterCallActions(): void {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.afterCallActions.length) {
        const action = this.afterCallActions.shift()!;
        // Each action is itself a host step: actions it causes run after it, in order.
        this.holdDrain++;
        try { action(); } finally { this.holdDrain--; }
      }
    } finally {
      this.draining = false;
    }
  }

  private allocate(size: number): number {
    const ex = this.instance.exports;
    const alloc = (typeof ex.malloc === "function" ? ex.malloc : ex.proxy_on_memory_allocate) as ((n: number) => number) | undefined;
    if (!alloc) return 0;
    // Reentrant call (host -> guest allocator); cpp-host does not switch contexts for it, and
    // restricts the host calls the allocator may make (restricted-calls.ts).
    const before = this.restricted;
    this.restricted = MALLOC_ALLOWED;
    try {
      return alloc(size) >>> 0;
    } finally {
      this.restricted = before;
    }
  }

  fail(reason: string): void {
    if (this.failed) return;
    this.failed = true;
    this.failureReason = reason;
    this.host.logs.write({ vm: this.index, contextId: this.currentContextId, level: "critical", message: `Wasm VM failed: ${reason}` });
  }
}
