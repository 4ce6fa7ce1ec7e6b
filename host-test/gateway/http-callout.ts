// One proxy_http_call exchange over real HTTP/1.1 with a chosen upstream address: pseudo-headers
// become the request line and Host, the whole response is collected, and the callback runs exactly
// once: with the response, or null on a connection error or when timeoutMs passes (Envoy answers
// a timed-out http_call with a failure). Used by the gateway and by the facade's "real" mode.
import http from "node:http";
import type { HttpCalloutRequest, HttpCalloutResponse } from "../abi/backend.js";
import { splitAddress } from "./address.js";

/** Envoy's ORIGINAL_DST cluster reads the destination from this request header (use_http_header). */
export const ORIGINAL_DST_HEADER = "x-envoy-original-dst-host";

export function sendHttpCallout(address: string, req: HttpCalloutRequest, agent: http.Agent | undefined,
  done: (res: HttpCalloutResponse | null) => void): void {
  const { host, port } = splitAddress(address);
  const headers: Record<string, string> = {};
  let method = "GET", path = "/";
  for (const [k, v] of req.headers) {
    if (k === ":method") method = v;
    else if (k === ":path") path = v;
    else if (k === ":authority") headers.host = v;
    else if (!k.startsWith(":")) headers[k] = v;
  }
  let settled = false;
  const finish = (r: HttpCalloutResponse | null) => { if (!settled) { settled = true; done(r); } };
  const r = http.request({ host, port, method, path, headers, agent }, (res) => {
    const chunks: Buffer[] = [];
    res.on("data", (d: Buffer) => chunks.push(d));
    res.on("end", () => {
      const pairs: Array<[string, string]> = [[":status", String(res.statusCode ?? 0)]];
      for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i].toLowerCase(), res.rawHeaders[i + 1]]);
      finish({ headers: pairs, body: Buffer.concat(chunks) });
    });
    res.on("error", () => finish(null));
  });
  if (req.timeoutMs > 0) r.setTimeout(req.timeoutMs, () => { r.destroy(); finish(null); });
  r.on("error", () => finish(null));
  r.end(req.body);
}

/** The destination an ORIGINAL_DST cluster would use for this call, or null. */
export function originalDestination(req: HttpCalloutRequest): string | null {
  const h = req.headers.find(([k]) => k.toLowerCase() === ORIGINAL_DST_HEADER);
  return h && /^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):\d+$/.test(h[1]) ? h[1] : null;
}
