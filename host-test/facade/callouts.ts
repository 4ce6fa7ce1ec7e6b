// Recorded callouts of the test facade (record-then-reply, as proxytest does for http calls):
// each Redis or HTTP call the guest makes is kept with its attributes until the test answers it
// (reply/respond), fails it, or the manual clock passes its timeout. A Redis timeout is a
// NetworkError; an http_call timeout or connect failure is the router's local reply (504 / 503,
// http-callout.ts), only reset() gives the guest 0 headers. Failure behaviour: answering twice is
// a test bug and throws.
import type { HttpCalloutResponse } from "../abi/backend.js";
import { calloutFailure } from "../gateway/http-callout.js";

export class RecordedRedisCall {
  settled = false;
  timedOut = false;
  constructor(
    readonly vm: number,
    readonly cluster: string,
    readonly query: Buffer,
    private readonly done: (reply: Buffer | null) => void,
    private readonly onSettle: (c: RecordedRedisCall) => void,
  ) {}

  /** The query as text (RESP is ASCII-framed), handy in assertions. */
  get text(): string { return this.query.toString("utf8"); }

  /** Answers with raw RESP bytes (status Ok). */
  reply(resp: Buffer | string): void { this.settle(Buffer.isBuffer(resp) ? resp : Buffer.from(resp, "utf8")); }

  /** Answers with NetworkError (status 1, size 0). */
  fail(): void { this.settle(null); }

  timeout(): void { if (!this.settled) { this.timedOut = true; this.settle(null); } }

  private settle(reply: Buffer | null): void {
    if (this.settled) throw new Error(`redis call to ${this.cluster} already answered`);
    this.settled = true;
    this.onSettle(this);
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

  respond(a: HttpCallAnswer): void {
    const headers: Array<[string, string]> = [[":status", String(a.status)], ...Object.entries(a.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v] as [string, string])];
    this.settle({ headers, body: a.body === undefined ? Buffer.alloc(0) : Buffer.from(a.body) });
  }

  /** Connect failure: the router's 503 local reply. */
  fail(): void { this.settle(calloutFailure("connection_failure")); }

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
