// One streamed request with extra headers (SLO, priority, tenant), timed at the client (wall ms):
// status, TTFT, TPOT, the pod, and the plugin's debug header (predicted_latency's prediction).
// Never rejects: errors are reported in the result.
import http from "node:http";
import { SseParser } from "../sse-parser.js";
import { chunkText, type Chunk } from "../stream-request.js";

export interface SloResult {
  status: number;
  startWall: number;
  ttftMs: number | null;
  tpotMs: number | null;
  e2eMs: number;
  pod: string;
  debug: string;
  tokens: number;
  error: string | null;
}

export function sloRequest(url: string, body: unknown, headers: Record<string, string>, agent: http.Agent, timeoutMs: number): Promise<SloResult> {
  const start = performance.now();
  return new Promise((resolve) => {
    let first: number | null = null;
    let last = 0;
    let events = 0;
    let done = false;
    const finish = (status: number, pod: string, debug: string, error: string | null) => {
      if (done) return;
      done = true;
      const end = performance.now();
      const tokens = Math.max(0, events);
      resolve({
        status, startWall: start, ttftMs: first === null ? null : first - start,
        tpotMs: first !== null && tokens > 1 ? (last - first) / (tokens - 1) : null,
        e2eMs: end - start, pod, debug, tokens, error,
      });
    };
    const req = http.request(url, { method: "POST", agent, headers: { "content-type": "application/json", ...headers } }, (res) => {
      const pod = String(res.headers["x-sim-pod"] ?? "");
      const debug = String(res.headers["x-llmlb-debug"] ?? "");
      const parser = new SseParser();
      res.on("data", (c: Buffer) => {
        for (const data of parser.push(c)) {
          if (data === "[DONE]") continue;
          let chunk: Chunk;
          try { chunk = JSON.parse(data) as Chunk; } catch { continue; }
          if (chunkText(chunk).length === 0) continue; // vLLM's opening role chunk, the usage chunk: no token
          const now = performance.now();
          if (first === null) first = now;
          last = now;
          events++;
        }
      });
      res.on("end", () => finish(res.statusCode ?? 0, pod, debug, res.statusCode === 200 ? null : `status ${res.statusCode}`));
      res.on("error", (e) => finish(res.statusCode ?? 0, pod, debug, String(e)));
    });
    req.setTimeout(timeoutMs, () => { req.destroy(new Error("timeout")); });
    req.on("error", (e) => finish(0, "", "", String(e)));
    req.end(JSON.stringify(body));
  });
}

/** Served in full: status 200 and no error (a stream cut, timed out or aborted after its 200
 *  headers, or a request held until the run's end, is a failure, as in bench/metrics.ts). */
export function served(r: { status: number; error: string | null }): boolean {
  return r.status === 200 && r.error === null;
}

export { nearestRank as pct } from "../metrics.js";
