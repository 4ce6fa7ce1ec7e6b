// One proxy_http_call exchange over real HTTP/1.1 with a chosen upstream address: pseudo-headers
// become the request line and Host, the whole response is collected, and the callback runs exactly
// once. Envoy runs http_call through an AsyncClient whose router answers its own failures as
// local replies (audit row 10; envoy source/common/http/async_client_impl.h sendLocalReply,
// router.cc): a timeout (total, from the request until the response is complete) is a 504
// "upstream request timeout", a connect failure or a reset before the response headers a 503
// with the router's text, a response the codec refuses (over 100 headers or 80 KiB of them, or
// malformed) a 502 protocol error, no healthy host a 503 "no healthy upstream"; the guest sees :status,
// content-length, content-type and the body. Only a reset after the response headers reaches the
// guest as a failure (0 headers, 0 body): `done(null)`, and so do the timeout once the response
// headers arrived and a body over the AsyncClient's 32 MiB buffer limit.
// Used by the gateway and by the facade's "real" mode.
import http from "node:http";
import os from "node:os";
import type { HttpCalloutRequest, HttpCalloutResponse } from "../abi/backend.js";
import { splitAddress } from "./address.js";

/** The router's local replies (envoy router.cc / upstream_request.cc texts), shared with proxy-stream. */
export const ROUTER_REPLIES = {
  no_healthy_upstream: { status: 503, details: "no_healthy_upstream", body: "no healthy upstream" },
  connection_termination: {
    status: 503, details: "upstream_reset_before_response_started{connection_termination}",
    body: "upstream connect error or disconnect/reset before headers. reset reason: connection termination",
  },
  // The upstream codec refused the response (router.cc onUpstreamReset: ProtocolError -> 502).
  protocol_error: {
    status: 502, details: "upstream_reset_before_response_started{protocol_error}",
    body: "upstream connect error or disconnect/reset before headers. reset reason: protocol error",
  },
  timeout: { status: 504, details: "response_timeout", body: "upstream request timeout" },
} as const;
export type RouterReplyKind = keyof typeof ROUTER_REPLIES;
export interface RouterReply { status: number; details: string; body: string }

/**
 * The router's reply to a failed connect (`code`: Node's error code, e.g. ECONNREFUSED). Envoy
 * 1.27: the pool reports RemoteConnectionFailure (conn_pool_base.cc onConnectionEvent), the
 * connection's transport failure reason is "delayed connect error: <errno>" (connection_impl.cc),
 * and router.cc onUpstreamReset puts both in the body and, blanks as `_`, in the details. (Envoy
 * before 1.26 said "reset reason: connection failure".)
 */
export function connectFailureReply(code: string): RouterReply {
  const errno = (os.constants.errno as Record<string, number>)[code] ?? os.constants.errno.ECONNREFUSED;
  return {
    status: 503,
    details: `upstream_reset_before_response_started{remote_connection_failure,delayed_connect_error:_${errno}}`,
    body: `upstream connect error or disconnect/reset before headers. reset reason: remote connection failure, transport failure reason: delayed connect error: ${errno}`,
  };
}

/** A reply named by its kind, or one built for the failure (connectFailureReply). */
export function routerReplyOf(kind: RouterReplyKind | RouterReply): RouterReply {
  return typeof kind === "string" ? ROUTER_REPLIES[kind] : kind;
}

/** An http_call failure as the guest sees it: the router's local reply. */
export function calloutFailure(kind: RouterReplyKind | RouterReply): HttpCalloutResponse {
  const r = routerReplyOf(kind);
  const body = Buffer.from(r.body);
  return {
    headers: [[":status", String(r.status)], ["content-length", String(body.length)], ["content-type", "text/plain"]],
    body,
  };
}

/** The AsyncClient's response buffer limit: runtime `http.async_response_buffer_limit`, default
 *  kBufferLimitForResponse (envoy-1.27 async_client_impl.h). A body past it resets the request
 *  and the guest gets a failure (AsyncRequestSharedImpl::onData / onReset:
 *  ExceedResponseBufferLimit; context.cc onHttpCallFailure: 0 headers, 0 body). */
export const ASYNC_RESPONSE_BUFFER_LIMIT = 32 * 1024 * 1024;

/** The upstream HTTP/1 codec's response header limits (envoy-1.27 http1/codec_impl.h
 *  MAX_RESPONSE_HEADERS_KB; envoy/http/codec.h DEFAULT_MAX_HEADERS_COUNT, the cluster's
 *  max_headers_count default): more headers, or more bytes, is a protocol error
 *  (codec_impl.cc completeCurrentHeader, checkMaxHeadersSize). Envoy counts each header's name and
 *  value; Node's parser also counts the status line and separators, so near the size limit it
 *  refuses a little earlier (stricter, never kinder). */
export const MAX_RESPONSE_HEADERS_COUNT = 100;
export const MAX_RESPONSE_HEADERS_BYTES = 80 * 1024;

export const CONNECT_FAILURES = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "ECONNTIMEOUT", "EADDRNOTAVAIL"]);

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
  let responded = false;
  let timer: NodeJS.Timeout | null = null;
  const finish = (res: HttpCalloutResponse | null) => {
    if (settled) return;
    settled = true;
    if (timer) clearTimeout(timer);
    done(res);
  };
  const r = http.request({ host, port, method, path, headers, agent, maxHeaderSize: MAX_RESPONSE_HEADERS_BYTES }, (res) => {
    if (res.rawHeaders.length / 2 > MAX_RESPONSE_HEADERS_COUNT) {
      finish(calloutFailure("protocol_error"));
      r.destroy();
      return;
    }
    responded = true;
    const chunks: Buffer[] = [];
    let size = 0;
    res.on("data", (d: Buffer) => {
      size += d.length;
      if (size > ASYNC_RESPONSE_BUFFER_LIMIT) { finish(null); r.destroy(); return; }
      chunks.push(d);
    });
    res.on("end", () => {
      if (!res.complete) { finish(null); return; }
      const pairs: Array<[string, string]> = [[":status", String(res.statusCode ?? 0)]];
      for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i].toLowerCase(), res.rawHeaders[i + 1]]);
      finish({ headers: pairs, body: Buffer.concat(chunks) });
    });
    res.on("aborted", () => finish(null));
    res.on("error", () => finish(null));
  });
  // Envoy's http_call timeout is the route timeout of the async request: total, not idle. The
  // router answers it with its 504 local reply, which the async stream turns into a reset once the
  // response headers were passed on (async_client_impl.h AsyncStreamImpl::sendLocalReply;
  // router.cc onUpstreamAbort): the guest then sees a failure, 0 headers.
  if (req.timeoutMs > 0) {
    timer = setTimeout(() => { finish(responded ? null : calloutFailure("timeout")); r.destroy(); }, req.timeoutMs);
  }
  r.on("error", (err: NodeJS.ErrnoException) => {
    if (responded) { finish(null); return; }
    const code = err.code ?? "";
    // llhttp's parse errors (HPE_HEADER_OVERFLOW, HPE_INVALID_*) are what Envoy's codec reports as
    // a protocol error.
    finish(calloutFailure(CONNECT_FAILURES.has(code) ? connectFailureReply(code) : code.startsWith("HPE_") ? "protocol_error" : "connection_termination"));
  });
  r.end(req.body);
}

/** The destination an ORIGINAL_DST cluster would use for this call, or null. */
export function originalDestination(req: HttpCalloutRequest): string | null {
  const h = req.headers.find(([k]) => k.toLowerCase() === ORIGINAL_DST_HEADER);
  return h && /^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):\d+$/.test(h[1]) ? h[1] : null;
}
