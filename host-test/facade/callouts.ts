// Recorded callouts of the test facade (record-then-reply, as proxytest does for http calls):
// each Redis or HTTP call the guest makes is kept with its attributes until the test answers it
// (reply/respond), fails it, or the manual clock passes its timeout (answered as a failure,
// like Envoy's timeout). Failure behaviour: answering twice is a test bug and throws.

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
    private readonly done: (res: { headers: Array<[string, string]>; body: Buffer } | null) => void,
    private readonly onSettle: (c: RecordedHttpCall) => void,
  ) {}

  header(name: string): string | undefined { return this.headers.find(([k]) => k === name.toLowerCase())?.[1]; }

  respond(a: HttpCallAnswer): void {
    const headers: Array<[string, string]> = [[":status", String(a.status)], ...Object.entries(a.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v] as [string, string])];
    this.settle({ headers, body: a.body === undefined ? Buffer.alloc(0) : Buffer.from(a.body) });
  }

  fail(): void { this.settle(null); }

  timeout(): void { if (!this.settled) { this.timedOut = true; this.settle(null); } }

  private settle(res: { headers: Array<[string, string]>; body: Buffer } | null): void {
    if (this.settled) throw new Error(`http call to ${this.cluster} already answered`);
    this.settled = true;
    this.onSettle(this);
    this.done(res);
  }
}
