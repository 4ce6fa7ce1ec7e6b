// One streamed OpenAI request over real HTTP: POSTs the body, parses the SSE reply and stamps
// every content chunk with the WALL clock (performance.now(), ms), so the caller can derive TTFT,
// ITL and E2E. Reads `x-sim-pod` (which pod served it) and the usage chunk.
// Failure behaviour: never rejects; a non-200 status, a connection error, a stream cut before
// `[DONE]`, or the timeout are reported in `error` (the socket is destroyed on timeout/abort).
import http from "node:http";
import { performance } from "node:perf_hooks";
import { SseParser } from "./sse-parser.js";

export interface StreamUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

export interface StreamOutcome {
  status: number;
  /** The `x-sim-pod` response header, null when absent. */
  pod: string | null;
  /** null on success. */
  error: string | null;
  startWall: number;
  /** Wall time of each chunk carrying content (the first one is the first token). */
  contentWalls: number[];
  endWall: number;
  /** Concatenated delta.content: the reply a multi-turn session sends back. */
  content: string;
  usage: StreamUsage | null;
}

export interface Chunk {
  choices?: Array<{ delta?: { content?: string | null }; text?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } | null } | null;
}

/** The text a chunk's first choice carries (chat `delta.content`, completions `text`); "" when none:
 *  vLLM's opening chunk (`delta.role`, empty content) and the usage chunk are not tokens. */
export function chunkText(chunk: Chunk): string {
  const c = chunk.choices?.[0];
  const text = c?.delta?.content ?? c?.text;
  return typeof text === "string" ? text : "";
}

function readUsage(u: NonNullable<Chunk["usage"]>): StreamUsage {
  return {
    promptTokens: u.prompt_tokens ?? 0,
    completionTokens: u.completion_tokens ?? 0,
    cachedTokens: u.prompt_tokens_details?.cached_tokens ?? 0,
  };
}

export function streamRequest(url: string, body: unknown, agent: http.Agent, timeoutMs: number, signal?: AbortSignal): Promise<StreamOutcome> {
  const payload = JSON.stringify(body);
  const outcome: StreamOutcome = { status: 0, pod: null, error: null, startWall: performance.now(), contentWalls: [], endWall: 0, content: "", usage: null };
  return new Promise((resolve) => {
    let settled = false;
    let done = false;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      outcome.endWall = performance.now();
      outcome.error = error;
      resolve(outcome);
    };
    const req = http.request(url, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", accept: "text/event-stream", "content-length": Buffer.byteLength(payload) },
    });
    const timer = setTimeout(() => { finish(`timeout after ${timeoutMs} ms`); req.destroy(); }, timeoutMs);
    const onAbort = () => { finish("aborted"); req.destroy(); };
    signal?.addEventListener("abort", onAbort);
    if (signal?.aborted) onAbort();
    req.on("error", (e) => finish(`connection: ${e.message}`));
    req.on("response", (res) => {
      outcome.status = res.statusCode ?? 0;
      const pod = res.headers["x-sim-pod"];
      outcome.pod = typeof pod === "string" ? pod : null;
      if (outcome.status !== 200) {
        res.resume();
        res.on("end", () => finish(`status ${outcome.status}`));
        res.on("error", () => finish(`status ${outcome.status}`));
        return;
      }
      const parser = new SseParser();
      res.on("data", (chunk: Buffer) => {
        const now = performance.now();
        for (const data of parser.push(chunk)) {
          if (data === "[DONE]") { done = true; continue; }
          let parsed: Chunk;
          try { parsed = JSON.parse(data) as Chunk; } catch { continue; }
          const text = chunkText(parsed);
          if (text.length > 0) {
            outcome.contentWalls.push(now);
            outcome.content += text;
          }
          if (parsed.usage) outcome.usage = readUsage(parsed.usage);
        }
      });
      res.on("end", () => finish(done ? null : "stream ended before [DONE]"));
      res.on("error", (e) => finish(`stream: ${e.message}`));
      res.on("close", () => finish(done ? null : "stream closed before [DONE]"));
    });
    req.end(payload);
  });
}
