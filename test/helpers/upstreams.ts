// Real HTTP upstreams for gateway tests (node:http servers on free loopback ports). The default
// handler echoes the request as JSON (which upstream answered, method, path, headers, body);
// tests pass their own handler for streaming, hanging or resetting upstreams.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface SeenRequest { method: string; path: string; headers: http.IncomingHttpHeaders; body: string }

export type UpstreamHandler = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, self: Upstream) => void;

export interface Upstream {
  address: string;
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export const echoHandler: UpstreamHandler = (req, res, body, self) => {
  const payload = JSON.stringify({ upstream: self.address, method: req.method, path: req.url, headers: req.headers, body: body.toString() });
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }).end(payload);
};

export async function startUpstream(handler: UpstreamHandler = echoHandler): Promise<Upstream> {
  const self: Upstream = { address: "", url: "", requests: [], close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      self.requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: body.toString() });
      handler(req, res, body, self);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  self.address = `127.0.0.1:${port}`;
  self.url = `http://${self.address}`;
  self.close = () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
  return self;
}

/** Polls `check` until it returns true (or fails after `timeoutMs`). For waiting on async endings. */
export async function waitFor(check: () => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
