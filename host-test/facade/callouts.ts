// Recorded callouts of the test facade (record-then-reply, as proxytest does for http calls):
// each Redis or HTTP call the guest makes is kept with its attributes until the test answers it
// (reply/respond), fails it, or the manual clock passes its timeout. A Redis call's timeout is its
// connection's (redis-connection.ts: one timer per worker and cluster, failing every pending call
// at once as NetworkError); an http_call timeout or connect failure is the router's local reply
// (504 / 503, http-callout.ts), reset() gives the guest 0 headers, and respond() keeps Envoy's
// limits (over 100 headers or 80 KiB of them: the 502; a body over 32 MiB: 0 headers). Failure behaviour:
// answering twice, out of send order on a connection, or on a connection that never came up, is a
// test bug and throws.
import type { HttpCalloutResponse } from "../abi/backend.js";
import { ASYNC_RESPONSE_BUFFER_LIMIT, MAX_RESPONSE_HEADERS_BYTES, MAX_RESPONSE_HEADERS_COUNT, calloutFailure, connectFailureReply } from "../gateway/http-callout.js";
import type { RecordedRedisConnection } from "./redis-connection.js";

export class RecordedRedisCall {
  settled = false;
  /** Failed because its connection's timer fired (the op timeout, or the connect timeout). */
  timedOut = false;
  constructor(
    readonly vm: number,
    readonly cluster: string,
    readonly query: Buffer,
    private readonly done: (reply: Buffer | null) => void,
    private readonly onSettle: (c: RecordedRedisCall, replied: boolean) => void,
    /** The worker's connection to the cluster the call was written on (redis-connection.ts). */
    readonly connection: RecordedRedisConnection,
  ) {}

  /** The query as text (RESP is ASCII-framed), handy in assertions. */
  get text(): string { return this.query.toString("utf8"); }

  /**
   * Answers with raw RESP bytes (status Ok); restarts the connection's op timer while other calls
   * remain. Redis answers the calls of one connection in the order they were sent, and Envoy's
   * client hands each reply to the oldest pending call (raw_client_impl.cc onRawResponse), so only
   * the oldest call pending on its connection can be answered; nor can a call on a connection that
   * never came up (an unreachable Redis).
   */
  reply(resp: Buffer | string): void {
    if (!this.settled && !this.connection.connected) throw new Error(`redis call to ${this.cluster}: the connection never came up, Redis cannot answer it`);
    if (!this.settled && this.connection.pending[0] !== this) {
      throw new Error(`redis call to ${this.cluster} answered before an older call on its connection: Redis answers in send order`);
    }
    this.settle(Buffer.isBuffer(resp) ? resp : Buffer.from(resp, "utf8"), true);
  }

  /**
   * NetworkError (status 1, size 0) by the only way Envoy produces one: the connection drops
   * (closed by Redis, reset, a protocol error), so EVERY call pending on it fails at once, in send
   * order (raw_client_impl.cc onEvent). Envoy has no way to fail one call alone.
   */
  fail(): void {
    if (this.settled) throw new Error(`redis call to ${this.cluster} already answered`);
    this.connection.close("dropped");
  }

  /** The connection closed under the call (its timer fired, or a re-init closed it). */
  dropped(timedOut: boolean): void {
    if (this.settled) return;
    this.timedOut = timedOut;
    this.settle(null, false);
  }

  private settle(reply: Buffer | null, replied: boolean): void {
    if (this.settled) throw new Error(`redis call to ${this.cluster} already answered`);
    this.settled = true;
    this.onSettle(this, replied);
    this.done(reply);
  }
}

export interface HttpCallAnswer { status: number; headers?: Record<string, string>; body?: string | Buffer }

export class RecordedHttpCall {
  settled = false;
  timedOut = false;
  constructor(
    readonly vm: number,
    readonly cluster: string,
    readonly headers: Array<[string, string]>,
    readonly body: Buffer,
    readonly timeoutMs: number,
    private readonly done: (res: HttpCalloutResponse | null) => void,
    private readonly onSettle: (c: RecordedHttpCall) => void,
  ) {}

  header(name: string): string | undefined { return this.headers.find(([k]) => k === name.toLowerCase())?.[1]; }

  /** The answer as Envoy would hand it over: over 100 headers or 80 KiB of names and values is the
   *  codec's protocol error (the router's 502), a body over 32 MiB a failure (gateway/http-callout.ts). */
  respond(a: HttpCallAnswer): void {
    const given = Object.entries(a.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v] as [string, string]);
    const headerBytes = given.reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
    if (given.length > MAX_RESPONSE_HEADERS_COUNT || headerBytes > MAX_RESPONSE_HEADERS_BYTES) { this.settle(calloutFailure("protocol_error")); return; }
    const body = a.body === undefined ? Buffer.alloc(0) : Buffer.from(a.body);
    if (body.length > ASYNC_RESPONSE_BUFFER_LIMIT) { this.settle(null); return; }
    this.settle({ headers: [[":status", String(a.status)], ...given], body });
  }

  /** Connect failure: the router's 503 local reply. */
  fail(): void { this.settle(calloutFailure(connectFailureReply("ECONNREFUSED"))); }

  /** A reset after the response started: the guest sees 0 headers, 0 body. */
  reset(): void { this.settle(null); }

  timeout(): void { if (!this.settled) { this.timedOut = true; this.settle(calloutFailure("timeout")); } }

  private settle(res: HttpCalloutResponse | null): void {
    if (this.settled) throw new Error(`http call to ${this.cluster} already answered`);
    this.settled = true;
    this.onSettle(this);
    this.done(res);
  }
}
