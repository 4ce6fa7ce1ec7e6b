// One gateway replica in a virtual run: the real plugin (release .wasm, one PluginHost with its
// VMs) on the ABI core, or no plugin (the cluster's own load balancer, plugin off), in front of
// the virtual fleet. It does what host-test/gateway/proxy-stream.ts does for one request, without
// sockets: request headers and body through the filter, the upstream chosen as Envoy would
// (override host if honoured, else the cluster LB), the pod's answer back through the response
// path, and exactly one ending (done/log/delete) per stream. The response body reaches the filter
// one chunk per token when the engine emits it, then [DONE] (as Envoy streams a vLLM response:
// predicted_latency times TTFT to the first body chunk and reads its open streams' progress);
// with `tokenChunks: false` (slo-hetero --two-chunk-body, the delivery before 2026-11-25), the
// first token's SSE event, then every other event and [DONE] at the end. Token times for the
// client are taken from the engine either way. Every delivery is a synchronous call, except the response's end: its
// own event at the same instant, after the engine's step completion (Envoy ends the stream with it). Backend: virtual clock, Redis through the run's one link, seeded randomness.
// Failure behaviour: every failure is an outcome (status, error) reported to the caller once;
// nothing throws on the request path.
import type { HostBackend, HttpCalloutRequest, HttpCalloutResponse, RouteMatch, UpstreamHostInfo } from "../../host-test/abi/backend.js";
import { WasmResult } from "../../host-test/abi/constants.js";
import { HeaderMap } from "../../host-test/abi/header-map.js";
import { PluginHost } from "../../host-test/abi/plugin-host.js";
import type { SharedDataStore } from "../../host-test/abi/shared-data.js";
import type { HttpStream, LocalReply, StreamEnding, StreamSink } from "../../host-test/abi/stream.js";
import { decideUpstream } from "../../host-test/abi/upstream-selection.js";
import { LocalLoadBalancer, type LbPolicy } from "../../host-test/gateway/local-lb.js";
import { PassThroughStream } from "../../host-test/gateway/pass-through.js";
import { MODEL_CLUSTER, ROUTE_NAME } from "../../host-test/local-stack.js";
import { SeededRandom } from "../../host-test/sim/random.js";
import type { RequestResult, SimRequest, TokenEvent } from "../../host-test/sim/request.js";
import { ResponseShapes, sseEvent, usageOf, wantsUsage } from "../../host-test/sim/openai.js";
import type { EventClock } from "./event-clock.js";
import type { VirtualRedisLink } from "./redis-link.js";
import type { VirtualFleet } from "./virtual-fleet.js";

/** One request as the load generator hands it to a gateway. */
export interface VirtualRequest {
  id: string;
  body: Buffer;
  /** The same body parsed (central pickers read the prompt). */
  bodyObject: unknown;
  promptTokens: readonly string[];
  maxTokens: number;
  /** Extra request headers (SLO, tenant, priority). */
  headers?: Array<[string, string]>;
}

/** What the client saw; times in virtual ms. */
export interface VirtualOutcome {
  status: number;
  pod: string | null;
  error: string | null;
  firstTokenMs: number | null;
  tokenMs: number[];
  endMs: number;
  content: string;
  promptTokens: number;
  cachedTokens: number;
  outputTokens: number;
  /** The response's x-llmlb-debug header (the plugin's decision), "" when absent. */
  debug: string;
  /** When the pod got the request, and when its scheduler could first see it (after the pod's API
   *  overhead); null when no pod took it. For analyses of the pick (bench/slo/ttft-bound.ts). */
  sentMs: number | null;
  podReadyMs: number | null;
}

/** Notes on `o` when its pod got the request (`sim`) and when its scheduler can see it. */
export function noteSent(o: VirtualOutcome, sim: SimRequest): void {
  o.sentMs = sim.arrivalMs;
  o.podReadyMs = sim.readyAtMs;
}

class VirtualBackend implements HostBackend {
  private readonly rng: SeededRandom;
  constructor(private readonly clock: EventClock, private readonly fleet: VirtualFleet, private readonly redis: VirtualRedisLink | null, seed: number) {
    this.rng = new SeededRandom(seed);
  }
  now(): number { return this.clock.unixMs(); }
  schedule(delayMs: number, fn: () => void): () => void { return this.clock.after(delayMs, fn); }
  redisInit(): number { return this.redis ? WasmResult.Ok : WasmResult.BadArgument; }
  redisCall(_vm: number, _cluster: string, query: Buffer, done: (reply: Buffer | null) => void): number {
    if (!this.redis) return WasmResult.BadArgument;
    this.redis.call(query, done);
    return WasmResult.Ok;
  }
  // No HTTP callouts in virtual runs (endpoint_metrics reads health-check bodies).
  httpCall(_req: HttpCalloutRequest, _done: (res: HttpCalloutResponse | null) => void): number { return WasmResult.BadArgument; }
  upstreamHosts(cluster: string): UpstreamHostInfo[] { return cluster === MODEL_CLUSTER ? this.fleet.upstreamHosts() : []; }
  matchRoute(): RouteMatch | null | undefined { return undefined; }
  random(out: Buffer): void {
    for (let i = 0; i < out.length; i++) out[i] = this.rng.int(256);
  }
}

export interface VirtualGatewayOptions {
  index: number;
  clock: EventClock;
  fleet: VirtualFleet;
  redis: VirtualRedisLink | null;
  clusterLb: LbPolicy;
  /** Plugin configuration JSON, null = plugin off. */
  pluginConfig: Record<string, unknown> | null;
  wasm: Uint8Array;
  workers: number;
  seed: number;
  /** Response body to the filter one chunk per token (default, as Envoy streams it); false: the first token, then the rest at the end. */
  tokenChunks?: boolean;
  /** The shared data its VMs reach (default: its own, as an Envoy's is per process). */
  sharedData?: SharedDataStore;
}

export class VirtualGateway {
  private constructor(
    readonly index: number,
    private readonly clock: EventClock,
    private readonly fleet: VirtualFleet,
    private readonly plugin: PluginHost | null,
    private readonly lb: LocalLoadBalancer,
    private readonly tokenChunks: boolean,
  ) {}

  static async create(o: VirtualGatewayOptions): Promise<VirtualGateway> {
    const backend = new VirtualBackend(o.clock, o.fleet, o.redis, (o.seed * 7919 + o.index * 104729) >>> 0);
    const plugin = o.pluginConfig === null ? null : await PluginHost.load(o.wasm, backend, {
      workers: o.workers, pluginName: "llm-lb", configuration: JSON.stringify(o.pluginConfig), logLevel: "warn",
      sharedData: o.sharedData ?? null,
    });
    if (plugin && plugin.configured.some((ok) => !ok)) {
      const why = plugin.logs.query("warn").map((r) => r.message).join("; ");
      throw new Error(`plugin configuration refused: ${why}`);
    }
    return new VirtualGateway(o.index, o.clock, o.fleet, plugin, new LocalLoadBalancer(o.clusterLb, (o.seed + o.index) >>> 0), o.tokenChunks ?? true);
  }

  private readonly live = new Set<VirtualExchange>();

  /** Sends one request through this gateway now; `onDone` is called exactly once. */
  send(req: VirtualRequest, onDone: (o: VirtualOutcome) => void): void {
    const x = new VirtualExchange(this.clock, this.fleet, this.plugin, this.lb, req, (o) => { this.live.delete(x); onDone(o); }, this.tokenChunks);
    this.live.add(x);
    x.start();
  }

  /** The clients of every open request give up (a bounded run's drain deadline). */
  abortAll(): void {
    for (const x of [...this.live]) x.clientAbort();
  }

  /** A plugin counter's value (0 without the plugin or the counter). */
  counter(name: string): number {
    const v = this.plugin?.metrics.valueOf(name);
    return typeof v === "number" ? v : 0;
  }

  close(): void { this.plugin?.shutdown(); }
}

const SSE_HEADERS: Array<[string, string]> = [[":status", "200"], ["content-type", "text/event-stream; charset=utf-8"], ["cache-control", "no-cache"]];
const DONE_CHUNK = Buffer.from("data: [DONE]\n\n");
const DEBUG_HEADER = "x-llmlb-debug";

/** The usage chunk of a chat stream, as the simulator's HTTP server writes it (host-test/sim/server.ts). */
function usageChunk(id: string, result: RequestResult): Buffer {
  return Buffer.from(sseEvent(new ResponseShapes("chat", id, "sim", 0).usageChunk(usageOf(result))));
}

/** One SSE event per token, as the simulator's server streams them. */
function sseEvents(texts: readonly string[]): string {
  let out = "";
  for (const t of texts) out += `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: t } }] })}\n\n`;
  return out;
}

/** One request's life through the filter and the fleet. */
class VirtualExchange implements StreamSink {
  private filter!: HttpStream | PassThroughStream;
  private address: string | null = null;
  private status = 0;
  private ending: StreamEnding | null = null;
  private finished = false;
  private readonly outcome: VirtualOutcome;

  constructor(
    private readonly clock: EventClock,
    private readonly fleet: VirtualFleet,
    private readonly plugin: PluginHost | null,
    private readonly lb: LocalLoadBalancer,
    private readonly req: VirtualRequest,
    private readonly onDone: (o: VirtualOutcome) => void,
    private readonly tokenChunks: boolean,
  ) {
    this.outcome = { status: 0, pod: null, error: null, firstTokenMs: null, tokenMs: [], endMs: 0, content: "", promptTokens: req.promptTokens.length, cachedTokens: 0, outputTokens: 0, debug: "", sentMs: null, podReadyMs: null };
  }

  start(): void {
    const headers = new HeaderMap([
      [":authority", "llm.local"], [":path", "/v1/chat/completions"], [":method", "POST"], [":scheme", "http"],
      ["content-type", "application/json"], ["accept", "text/event-stream"],
      ["content-length", String(this.req.body.length)], ["x-request-id", this.req.id], ...(this.req.headers ?? []),
    ]);
    this.filter = this.plugin
      ? this.plugin.newStream(this.plugin.pickVm(), this, {
        route: ROUTE_NAME, cluster: MODEL_CLUSTER, sourceAddress: "10.1.0.1:40000", destinationAddress: "10.1.0.2:8080",
        protocol: "HTTP/1.1", startTimeMs: this.clock.unixMs(),
      })
      : new PassThroughStream(this, ROUTE_NAME, MODEL_CLUSTER);
    this.filter.start(headers, false);
    this.filter.requestData(this.req.body, true);
  }

  // ---- StreamSink: request side ----
  requestHeadersOut(_headers: HeaderMap, endStream: boolean): void {
    const hosts = this.filter.cluster === MODEL_CLUSTER ? this.fleet.upstreamHosts() : [];
    const decision = decideUpstream(this.filter.overrideHost, hosts, (eligible) => this.lb.pick(eligible), { panicThresholdPercent: 0 });
    if (decision.address === null) {
      this.ending = "no_healthy_upstream";
      this.filter.hostReply(503, "no_healthy_upstream", "no healthy upstream", "UH");
      return;
    }
    this.address = decision.address;
    this.filter.upstreamAddress = decision.address;
    this.lb.onStart(decision.address);
    if (endStream) this.dispatch();
  }

  requestDataOut(_chunk: Buffer, endStream: boolean): void {
    if (endStream && this.address !== null && !this.ending) this.dispatch();
  }

  // ---- StreamSink: response side ----
  responseHeadersOut(headers: HeaderMap, endStream: boolean): void {
    this.status = Number(headers.get(":status") ?? 0);
    this.outcome.debug = headers.get(DEBUG_HEADER) ?? "";
    if (endStream) this.endLater(this.ending ?? "complete");
  }

  responseDataOut(_chunk: Buffer, endStream: boolean): void {
    if (endStream) this.endLater(this.ending ?? "complete");
  }

  localReplyStarted(_reply: LocalReply): void {
    this.ending ??= "local_reply";
    this.releaseUpstream();
  }

  resetRequested(reason: string): void {
    this.ending ??= reason === "wasm_fail_stream" ? "vm_failure" : "filter_reset";
    this.releaseUpstream();
    this.endLater(this.ending);
  }

  // ---- upstream ----
  private dispatch(): void {
    const index = this.fleet.indexOf(this.address!);
    const pod = this.fleet.pods[index];
    this.outcome.pod = pod?.name ?? null;
    const sim = pod ? this.fleet.submit(index, this.req.promptTokens, this.req.maxTokens) : null;
    this.sim = sim;
    if (!sim) {
      this.filter.responseHeaders(HeaderMap.from([[":status", "400"], ["content-length", "0"]]), true);
      return;
    }
    noteSent(this.outcome, sim);
    this.filter.responseHeaders(HeaderMap.from([...SSE_HEADERS, ["x-sim-pod", pod.name]]), false);
    const words: string[] = [];
    sim.on("token", (t: TokenEvent) => {
      if (t.index === 0) this.outcome.firstTokenMs = t.atMs;
      this.outcome.tokenMs.push(t.atMs);
      words.push(t.text);
      if (t.index === 0 || this.tokenChunks) this.filter.responseData(Buffer.from(sseEvents([t.text])), false);
    });
    sim.on("done", (result) => {
      this.outcome.cachedTokens = result.cachedTokens;
      this.outcome.outputTokens = result.outputTokens;
      this.outcome.content = words.join(" ");
      if (result.finishReason === "abort") {
        this.ending ??= "upstream_reset";
        this.filter.markFlag("UR");
        this.endLater(this.ending);
        return;
      }
      // As the simulator's HTTP server: a usage chunk before [DONE] when the request asked for it.
      const tail = wantsUsage(this.req.bodyObject) ? Buffer.concat([usageChunk(this.req.id, result), DONE_CHUNK]) : DONE_CHUNK;
      const last = words.length > 1 && !this.tokenChunks ? Buffer.concat([Buffer.from(sseEvents(words.slice(1))), tail]) : tail;
      // The end of the response in its own event at this instant: the engine is inside its
      // step's completion (other streams' tokens of this step not out yet), and Envoy ends the
      // stream with its last byte, so the plugin's end callbacks must not run mid-step.
      this.clock.after(0, () => { if (!this.finished) this.filter.responseData(last, true); });
    });
  }

  private sim: SimRequest | null = null;

  clientAbort(): void {
    if (this.finished) return;
    this.ending = "client_abort";
    this.filter.markFlag("DC");
    this.sim?.abort();
    this.releaseUpstream();
    this.endLater("client_abort");
  }

  private releaseUpstream(): void {
    if (this.address === null) return;
    this.lb.onEnd(this.address);
    this.address = null;
  }

  /** Endings run as their own event at this instant (the real gateway ends on a later I/O event). */
  private endLater(kind: StreamEnding): void {
    if (this.finished) return;
    this.finished = true;
    this.clock.after(0, () => {
      this.releaseUpstream();
      this.filter.finish(kind);
      const o = this.outcome;
      o.status = this.status;
      o.endMs = this.clock.now();
      if (kind !== "complete" || this.status !== 200) o.error = kind === "complete" ? `status ${this.status}` : `${kind}${this.status ? ` (status ${this.status})` : ""}`;
      this.onDone(o);
    });
  }
}
