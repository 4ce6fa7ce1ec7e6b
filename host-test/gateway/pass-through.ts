// The stream object for routes that do not run the Wasm filter (`plugin: false` or no plugin):
// the same surface the proxy uses on an HttpStream, with every event passed straight through.
// Failure behaviour: none (no guest involved).
import type { ResponseFlagName } from "../abi/constants.js";
import { ResponseFlag } from "../abi/constants.js";
import type { HeaderMap } from "../abi/header-map.js";
import { localReplyHeaders, type LocalReply, type StreamEnding, type StreamSink } from "../abi/stream.js";

export class PassThroughStream {
  readonly overrideHost: string | null = null;
  readonly routeRecomputations = 0;
  upstreamAddress: string | null = null;
  localReply: LocalReply | null = null;
  responseFlags = 0;
  ended: StreamEnding | null = null;
  private responseStarted = false;

  constructor(private readonly sink: StreamSink, readonly route: string | null, readonly cluster: string | null) {}

  start(headers: HeaderMap, endStream: boolean): void { this.sink.requestHeadersOut(headers, endStream); }
  requestData(chunk: Buffer, endStream: boolean): void { if (!this.localReply) this.sink.requestDataOut(chunk, endStream); }
  responseHeaders(headers: HeaderMap, endStream: boolean): void {
    if (this.localReply) return;
    this.responseStarted = true;
    this.sink.responseHeadersOut(headers, endStream);
  }
  responseData(chunk: Buffer, endStream: boolean): void { if (!this.localReply) this.sink.responseDataOut(chunk, endStream); }
  markFlag(flag: ResponseFlagName): void { this.responseFlags |= ResponseFlag[flag]; }

  hostReply(status: number, details: string, body: string, flag?: ResponseFlagName): void {
    if (flag) this.markFlag(flag);
    if (this.localReply || this.responseStarted) { this.sink.resetRequested("local_reply_after_response_started"); return; }
    const bytes = Buffer.from(body);
    const headers = localReplyHeaders(status, [], bytes);
    this.localReply = { status, details, headers, body: bytes, byHost: true };
    this.sink.localReplyStarted(this.localReply);
    this.sink.responseHeadersOut(headers, bytes.length === 0);
    if (bytes.length) this.sink.responseDataOut(bytes, true);
  }

  finish(kind: StreamEnding): void { if (!this.ended) this.ended = kind; }
}
