// RESP2 codec of the host side (the only one in host-test/): encodes commands the way Higress's
// guests send them (an array of bulk strings, higress-abi.md "Query encoding"), frames replies
// (replyLength: what the Redis client needs to cut exactly one reply out of the socket stream) and
// decodes replies for tests and tools (parseReply).
// Failure behaviour: replyLength never throws (-1 incomplete, -2 malformed); parseReply throws an
// Error on incomplete or malformed input (it is for tests/tools, not for the request path).
// RESP3-only types (%, ~, _, #, ...) are "malformed" here: the host never sends HELLO 3.

const CR = 0x0d;
const LF = 0x0a;
const CRLF = Buffer.from("\r\n");

/** A Redis error reply (`-ERR ...`). A value, not an exception: replies carry errors as data. */
export class RespError {
  constructor(readonly message: string) {}
  /** First word of the message, e.g. "NOSCRIPT", "NOAUTH", "ERR". */
  get code(): string {
    const space = this.message.indexOf(" ");
    return space < 0 ? this.message : this.message.slice(0, space);
  }
}

/**
 * Decoded reply. Simple strings and (by default) bulk strings are `string`; with
 * `{ bulk: "buffer" }` bulk strings are `Buffer` (binary-safe). Null bulk / null array are `null`.
 */
export type RespReply = string | number | null | Buffer | RespError | RespReply[];

/** `*N\r\n` then `$len\r\n<bytes>\r\n` per argument; numbers are sent as their decimal text. */
export function encodeCommand(args: Array<string | Buffer | number>): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.isBuffer(arg) ? arg : Buffer.from(typeof arg === "number" ? String(arg) : arg, "utf8");
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, CRLF);
  }
  return Buffer.concat(parts);
}

const INCOMPLETE = -1;
const MALFORMED = -2;

/** Index of the CR of the CRLF ending the line that starts at `from`; -1 incomplete, -2 malformed. */
function lineEnd(buf: Buffer, from: number): number {
  const cr = buf.indexOf(CR, from);
  if (cr < 0) {
    // A bare LF before any CR can never become a valid line.
    return buf.indexOf(LF, from) >= 0 ? MALFORMED : INCOMPLETE;
  }
  const lf = buf.indexOf(LF, from);
  if (lf >= 0 && lf < cr) return MALFORMED;
  if (cr + 1 >= buf.length) return INCOMPLETE;
  return buf[cr + 1] === LF ? cr : MALFORMED;
}

/** Parses an optionally signed decimal integer in buf[from, to); null when it is not one. */
function parseInteger(buf: Buffer, from: number, to: number): number | null {
  let i = from;
  let negative = false;
  if (i < to && (buf[i] === 0x2d /* - */ || buf[i] === 0x2b /* + */)) {
    negative = buf[i] === 0x2d;
    i++;
  }
  if (i >= to) return null;
  let value = 0;
  for (; i < to; i++) {
    const c = buf[i]!;
    if (c < 0x30 || c > 0x39) return null;
    value = value * 10 + (c - 0x30);
  }
  return negative ? -value : value;
}

/**
 * Byte length of ONE complete RESP2 reply starting at `offset`; -1 if more bytes are needed,
 * -2 if the bytes cannot be RESP2. Nested arrays are walked with a counter, not recursion, so a
 * deeply nested reply cannot overflow the stack.
 */
export function replyLength(buf: Buffer, offset = 0): number {
  let pos = offset;
  let remaining = 1; // replies still to walk
  while (remaining > 0) {
    if (pos >= buf.length) return INCOMPLETE;
    const type = buf[pos]!;
    const end = lineEnd(buf, pos + 1);
    if (end < 0) return end;
    const next = end + 2;
    remaining--;
    switch (type) {
      case 0x2b: // + simple string
      case 0x2d: // - error
        pos = next;
        break;
      case 0x3a: // : integer
        if (parseInteger(buf, pos + 1, end) === null) return MALFORMED;
        pos = next;
        break;
      case 0x24: { // $ bulk string
        const len = parseInteger(buf, pos + 1, end);
        if (len === null || len < -1) return MALFORMED;
        if (len === -1) { pos = next; break; }
        if (next + len + 2 > buf.length) return INCOMPLETE;
        if (buf[next + len] !== CR || buf[next + len + 1] !== LF) return MALFORMED;
        pos = next + len + 2;
        break;
      }
      case 0x2a: { // * array
        const count = parseInteger(buf, pos + 1, end);
        if (count === null || count < -1) return MALFORMED;
        if (count > 0) remaining += count;
        pos = next;
        break;
      }
      default:
        return MALFORMED;
    }
  }
  return pos - offset;
}

export interface ParseOptions {
  /** How bulk strings are returned: "string" (UTF-8, default) or "buffer" (binary-safe). */
  bulk?: "string" | "buffer";
}

/** Decodes the first reply in `buf` (trailing bytes are ignored). Throws on incomplete/malformed. */
export function parseReply(buf: Buffer, options: ParseOptions = {}): RespReply {
  const length = replyLength(buf, 0);
  if (length === INCOMPLETE) throw new Error("RESP reply is incomplete");
  if (length === MALFORMED) throw new Error("RESP reply is malformed");
  return decodeAt(buf, 0, options.bulk === "buffer").value;
}

/** Decodes one reply already known (by replyLength) to be complete and well formed. */
function decodeAt(buf: Buffer, pos: number, bulkAsBuffer: boolean): { value: RespReply; next: number } {
  const end = lineEnd(buf, pos + 1);
  const line = () => buf.toString("utf8", pos + 1, end);
  const next = end + 2;
  switch (buf[pos]) {
    case 0x2b:
      return { value: line(), next };
    case 0x2d:
      return { value: new RespError(line()), next };
    case 0x3a:
      return { value: parseInteger(buf, pos + 1, end)!, next };
    case 0x24: {
      const len = parseInteger(buf, pos + 1, end)!;
      if (len === -1) return { value: null, next };
      const bytes = buf.subarray(next, next + len);
      return { value: bulkAsBuffer ? Buffer.from(bytes) : bytes.toString("utf8"), next: next + len + 2 };
    }
    default: { // '*' (replyLength rejected every other type byte)
      const count = parseInteger(buf, pos + 1, end)!;
      if (count === -1) return { value: null, next };
      const items: RespReply[] = [];
      let at = next;
      for (let i = 0; i < count; i++) {
        const item = decodeAt(buf, at, bulkAsBuffer);
        items.push(item.value);
        at = item.next;
      }
      return { value: items, next: at };
    }
  }
}
