// A tiny in-process HTTP proxy in front of the simulated pods whose picker is plain TypeScript:
// the home of the omniscient reference (it reads the engines directly) and of a gateway-less round
// robin. Reads the whole request body (pickers look at the prompt), forwards it to the picked pod,
// streams the answer back, and tells the picker when the first body byte (the first token of a
// stream) and the end arrive.
// Failure behaviour: an unreachable pod -> 502; a client that disconnects aborts the upstream
// request; never throws after start.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface PodTarget { name: string; url: string }

export interface Pick {
  pod: number;
  ticket?: unknown;
  /** The picker's account of its decision (virtual runs report it as the plugin's debug header). */
  debug?: string;
}

export interface Picker {
  /** `body` is the parsed JSON request, or null when it is not JSON; `headers`: the request's (names lower case). */
  pick(body: unknown, headers?: ReadonlyArray<readonly [string, string]>): Pick;
  onFirstByte?(pick: Pick): void;
  /** Each body chunk (a token of a stream), the first included, after onFirstByte. */
  onToken?(pick: Pick): void;
  onEnd?(pick: Pick): void;
}

export interface PickerProxy {
  url: string;
  close(): Promise<void>;
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", () => resolve(Buffer.concat(chunks)));
  });
}

function parseJson(raw: Buffer): unknown {
  try { return JSON.parse(raw.toString("utf8")); } catch { return null; }
}

export async function startPickerProxy(pods: PodTarget[], picker: Picker): Promise<PickerProxy> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const server = http.createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const headers = Object.entries(req.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as const]));
      const pick = picker.pick(parseJson(raw), headers);
      let firstByte = false;
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        picker.onEnd?.(pick);
      };
      const upstream = http.request(pods[pick.pod].url + (req.url ?? "/"), {
        method: req.method,
        agent,
        headers: { ...req.headers, host: new URL(pods[pick.pod].url).host, "content-length": raw.length },
      });
      upstream.on("response", (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.on("data", (chunk: Buffer) => {
          if (!firstByte) { firstByte = true; picker.onFirstByte?.(pick); }
          if (!ended) picker.onToken?.(pick);
          res.write(chunk);
        });
        up.on("end", () => { res.end(); end(); });
        up.on("error", () => { res.destroy(); end(); });
        up.on("close", () => { if (!up.complete) res.destroy(); end(); });
      });
      upstream.on("error", (e) => {
        end();
        if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end(`upstream: ${e.message}`);
        else res.destroy();
      });
      res.on("close", () => { if (!res.writableFinished) upstream.destroy(); });
      upstream.end(raw);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      agent.destroy();
    },
  };
}

/** Each pod in turn. */
export function roundRobinPicker(podCount: number): Picker {
  let next = 0;
  return { pick: () => { const pod = next; next = (next + 1) % podCount; return { pod }; } };
}
