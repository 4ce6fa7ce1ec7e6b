// One simulated vLLM (or SGLang) pod over real HTTP (node:http), backed by a realtime SimEngine.
// Routes: POST /v1/chat/completions, POST /v1/completions (SSE or JSON), GET /v1/models,
// GET /health, GET /metrics, GET|POST /sim/control. Every response carries `x-sim-pod: <name>`.
// Generation requests honour failure injection first: header `x-sim-status: <4xx|5xx>` answers
// that status at once; control.errorRate answers 500 at once; header `x-sim-reset-after: K` or
// control.resetAfterTokens resets the connection after K tokens.
// Time: the API overhead (profile.apiOverheadMs) is simulated by the engine and counts in TTFT;
// all latencies the engine reports are simulated (see engine.ts).
// Failure behaviour: bad JSON or fields -> 400, unknown model -> 404, too long -> 400 (OpenAI-style
// bodies); a client that disconnects aborts its engine request (its blocks are freed).
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  applyControlUpdate,
  parseControlUpdate,
  validateErrorRate,
  validateResetAfterTokens,
  validateSlowFactor,
  type SimControl,
  type SimControlState,
} from "./control.js";
import { SimEngine } from "./engine.js";
import { renderMetrics, type MetricsFlavor } from "./metrics.js";
import { errorBody, parseGenerationRequest, ResponseShapes, sseEvent, usageOf, type GenerationKind, type GenerationRequest } from "./openai.js";
import { resolveProfile, type SimProfile } from "./profiles.js";
import { SeededRandom } from "./random.js";
import type { SimRequest, TokenEvent } from "./request.js";
import { tokenize } from "./tokenizer.js";

export interface SimPodOptions {
  /** Pod name, echoed in `x-sim-pod` (default "pod-0"). */
  name?: string;
  /** 0 (default) = any free port. */
  port?: number;
  /** Profile name or object (default "tiny"). */
  profile?: string | SimProfile;
  profileOverrides?: Partial<SimProfile>;
  /** Served model name (default: the profile's). */
  modelName?: string;
  /** LoRA adapter names served on top of the base model (listed in /v1/models). */
  loraAdapters?: string[];
  maxLoras?: number;
  /** Simulated ms per wall ms (default 1). */
  timeScale?: number;
  seed?: number;
  /** /metrics format (default "vllm"). */
  flavor?: MetricsFlavor;
}

export interface SimPod {
  name: string;
  url: string;
  port: number;
  host: "127.0.0.1";
  engine: SimEngine;
  control: SimControl;
  close(): Promise<void>;
}

const HOST = "127.0.0.1";
const MAX_BODY_BYTES = 64 * 1024 * 1024;

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: http.ServerResponse, status: number, message: string): void {
  sendJson(res, status, errorBody(status, message));
}

function readBody(req: http.IncomingMessage): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString("utf8")));
    req.on("error", () => resolve(null));
  });
}

function headerInt(req: http.IncomingMessage, name: string): number | null {
  const raw = req.headers[name];
  if (typeof raw !== "string" || !/^\d+$/.test(raw.trim())) return null;
  return Number(raw.trim());
}

function listen(server: http.Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, HOST, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export async function startSimPod(opts: SimPodOptions = {}): Promise<SimPod> {
  const name = opts.name ?? "pod-0";
  const profile = resolveProfile(opts.profile ?? "tiny", opts.profileOverrides);
  const modelName = opts.modelName ?? profile.modelName;
  const loraAdapters = opts.loraAdapters ?? [];
  const timeScale = opts.timeScale ?? 1;
  if (!(timeScale > 0 && Number.isFinite(timeScale))) throw new Error(`timeScale must be > 0, got ${timeScale}`);
  const flavor = opts.flavor ?? "vllm";
  const seed = opts.seed ?? 1;
  const engine = new SimEngine({ profile, mode: "realtime", timeScale, seed, maxLoras: opts.maxLoras });
  const rng = new SeededRandom(seed ^ 0x9e3779b9);
  const created = Math.floor(Date.now() / 1000);
  let responseNumber = 0;

  const settings: SimControlState = { errorRate: 0, slowFactor: 1, resetAfterTokens: null, refusingConnections: false, metricsOverrides: {} };
  let refuseTimer: NodeJS.Timeout | null = null;
  let closed = false;

  const server = http.createServer((req, res) => {
    res.setHeader("x-sim-pod", name);
    // A keep-alive socket opened before refuseConnections() must not get through either.
    if (settings.refusingConnections) {
      req.socket.destroy();
      return;
    }
    void route(req, res);
  });

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://sim").pathname;
    const method = req.method ?? "GET";
    if (method === "GET" && path === "/health") {
      res.writeHead(200, { "content-length": 0 });
      res.end();
    } else if (method === "GET" && path === "/v1/models") {
      sendJson(res, 200, modelsList());
    } else if (method === "GET" && path === "/metrics") {
      const text = renderMetrics(engine.snapshot(), { flavor, modelName, overrides: settings.metricsOverrides, loraEnabled: loraAdapters.length > 0 });
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
      res.end(text);
    } else if (path === "/sim/control" && (method === "GET" || method === "POST")) {
      await handleControl(req, res, method);
    } else if (method === "POST" && (path === "/v1/chat/completions" || path === "/v1/completions")) {
      await handleGeneration(req, res, path === "/v1/chat/completions" ? "chat" : "completion");
    } else {
      sendError(res, 404, `no route for ${method} ${path}`);
    }
  }

  function modelsList(): unknown {
    const base = { object: "model", created, owned_by: "vllm", max_model_len: profile.maxModelLen };
    return {
      object: "list",
      data: [
        { ...base, id: modelName, root: modelName, parent: null },
        ...loraAdapters.map((lora) => ({ ...base, id: lora, root: lora, parent: modelName })),
      ],
    };
  }

  async function handleControl(req: http.IncomingMessage, res: http.ServerResponse, method: string): Promise<void> {
    if (method === "POST") {
      const raw = await readBody(req);
      let body: unknown;
      try {
        body = JSON.parse(raw ?? "");
      } catch {
        return sendError(res, 400, "control body is not valid JSON");
      }
      const parsed = parseControlUpdate(body);
      if (!parsed.ok) return sendError(res, 400, parsed.message);
      await applyControlUpdate(control, parsed.update);
    }
    sendJson(res, 200, { ...control.state(), running: engine.numRunning(), waiting: engine.numWaiting(), kvUsage: engine.pool.usage() });
  }

  async function handleGeneration(req: http.IncomingMessage, res: http.ServerResponse, kind: GenerationKind): Promise<void> {
    const forced = headerInt(req, "x-sim-status");
    if (forced !== null && forced >= 400 && forced <= 599) {
      req.resume();
      return sendError(res, forced, `status ${forced} forced by x-sim-status`);
    }
    if (settings.errorRate > 0 && rng.next() < settings.errorRate) {
      req.resume();
      return sendError(res, 500, "injected failure (errorRate)");
    }
    const raw = await readBody(req);
    if (raw === null) return sendError(res, 400, "request body unreadable or too large");
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return sendError(res, 400, "request body is not valid JSON");
    }
    const parsed = parseGenerationRequest(kind, body);
    if (!parsed.ok) return sendError(res, 400, parsed.message);
    const request = parsed.request;
    const requestedModel = request.model ?? modelName;
    if (requestedModel !== modelName && !loraAdapters.includes(requestedModel)) {
      return sendError(res, 404, `The model \`${requestedModel}\` does not exist.`);
    }
    const promptTokens = tokenize(request.promptText);
    const maxTokens = request.maxTokens ?? profile.maxModelLen - promptTokens.length;
    if (promptTokens.length === 0) return sendError(res, 400, "prompt is empty");
    if (promptTokens.length + maxTokens > profile.maxModelLen || maxTokens < 1) {
      return sendError(
        res,
        400,
        `This model's maximum context length is ${profile.maxModelLen} tokens. However, you requested ${promptTokens.length + Math.max(1, maxTokens)} tokens (${promptTokens.length} in the messages, ${Math.max(1, maxTokens)} in the completion).`,
      );
    }
    const resetAfter = headerInt(req, "x-sim-reset-after") ?? settings.resetAfterTokens;
    const arrivalMs = engine.now();
    let simRequest: SimRequest | null = null;
    let clientGone = false;
    res.on("close", () => {
      if (res.writableFinished) return;
      clientGone = true;
      simRequest?.abort();
    });
    if (clientGone || closed) return;
    const [minOverhead, maxOverhead] = profile.apiOverheadMs;
    simRequest = engine.submit({
      promptTokens,
      maxTokens,
      ignoreEos: request.ignoreEos,
      lora: requestedModel === modelName ? null : requestedModel,
      arrivalMs,
      apiOverheadMs: rng.uniform(minOverhead, maxOverhead),
    });
    const prefix = request.kind === "chat" ? "chatcmpl" : "cmpl";
    const shapes = new ResponseShapes(request.kind, `${prefix}-${name}-${responseNumber++}`, requestedModel, Math.floor(Date.now() / 1000));
    if (request.stream) streamResponse(res, simRequest, shapes, request, resetAfter);
    else jsonResponse(res, simRequest, shapes, resetAfter);
  }

  /** Sends RST after the bytes already written reach the kernel, so the client sees K tokens. */
  function resetConnection(res: http.ServerResponse, simRequest: SimRequest): void {
    simRequest.abort();
    const socket = res.socket;
    if (!socket) return;
    socket.write("", () => socket.resetAndDestroy());
  }

  function streamResponse(res: http.ServerResponse, simRequest: SimRequest, shapes: ResponseShapes, request: GenerationRequest, resetAfter: number | null): void {
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    res.flushHeaders();
    let resetting = resetAfter === 0;
    if (resetting) resetConnection(res, simRequest);
    simRequest.on("token", (token: TokenEvent) => {
      if (resetting || res.destroyed) return;
      if (token.index === 0 && shapes.kind === "chat") res.write(sseEvent(shapes.roleChunk()));
      res.write(sseEvent(shapes.tokenChunk(token.index === 0 ? token.text : ` ${token.text}`, token.finishReason)));
      if (resetAfter !== null && token.index + 1 >= resetAfter) {
        resetting = true;
        resetConnection(res, simRequest);
      }
    });
    simRequest.on("done", (result) => {
      if (resetting || res.destroyed) return;
      if (result.finishReason === "abort") {
        res.destroy(); // engine shut down under us: the client must not take a cut stream as complete
        return;
      }
      if (request.includeUsage) res.write(sseEvent(shapes.usageChunk(usageOf(result))));
      res.end(sseEvent("[DONE]"));
    });
  }

  function jsonResponse(res: http.ServerResponse, simRequest: SimRequest, shapes: ResponseShapes, resetAfter: number | null): void {
    const words: string[] = [];
    simRequest.on("token", (token: TokenEvent) => {
      words.push(token.text);
      if (resetAfter !== null && words.length === resetAfter) resetConnection(res, simRequest);
    });
    if (resetAfter === 0) resetConnection(res, simRequest);
    simRequest.on("done", (result) => {
      if (res.destroyed) return;
      if (result.finishReason === "abort") {
        res.destroy();
        return;
      }
      sendJson(res, 200, shapes.full(words.join(" "), result.finishReason, usageOf(result)));
    });
  }

  const control: SimControl = {
    state: () => ({ ...settings, metricsOverrides: { ...settings.metricsOverrides } }),
    setErrorRate(rate) {
      const problem = validateErrorRate(rate);
      if (problem) throw new Error(problem);
      settings.errorRate = rate;
    },
    setSlowFactor(factor) {
      const problem = validateSlowFactor(factor);
      if (problem) throw new Error(problem);
      settings.slowFactor = factor;
      engine.slowFactor = factor;
    },
    setResetAfterTokens(tokens) {
      const problem = validateResetAfterTokens(tokens);
      if (problem) throw new Error(problem);
      settings.resetAfterTokens = tokens;
    },
    async refuseConnections(forMs) {
      if (refuseTimer) clearTimeout(refuseTimer);
      refuseTimer = null;
      if (!settings.refusingConnections) {
        settings.refusingConnections = true;
        server.close(); // stops accepting; live streams go on
        server.closeIdleConnections();
      }
      if (forMs !== undefined) refuseTimer = setTimeout(() => void control.acceptConnections(), forMs);
    },
    async acceptConnections() {
      if (refuseTimer) clearTimeout(refuseTimer);
      refuseTimer = null;
      if (!settings.refusingConnections || closed) return;
      await listen(server, port);
      settings.refusingConnections = false;
    },
    setMetricsOverrides(overrides) {
      if (overrides === null) {
        settings.metricsOverrides = {};
        return;
      }
      for (const [metric, value] of Object.entries(overrides)) {
        if (value === null) delete settings.metricsOverrides[metric];
        else settings.metricsOverrides[metric] = value;
      }
    },
    async reset() {
      settings.errorRate = 0;
      settings.resetAfterTokens = null;
      settings.metricsOverrides = {};
      control.setSlowFactor(1);
      await control.acceptConnections();
    },
  };

  const port = await listen(server, opts.port ?? 0);
  return {
    name,
    url: `http://${HOST}:${port}`,
    port,
    host: HOST,
    engine,
    control,
    async close() {
      if (closed) return;
      closed = true;
      if (refuseTimer) clearTimeout(refuseTimer);
      engine.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
    },
  };
}
