// RESP2 codec for the plugin's Redis client (replies arrive through proxy_redis_call responses).
// Encoder: RespCommand builds `*N\r\n$len\r\narg\r\n...` with lengths in UTF-8 bytes.
// Parser: parseResp reads one reply; status 0 = ok, 1 = incomplete (the buffer ends inside the
// reply, wherever the cut is), 2 = malformed (a byte that no valid reply could have there, an
// over-long length, nesting beyond maxDepth). It never throws and reports malformed input as
// early as the offending byte, so garbage is not mistaken for a reply still in transit.
import { utf8Encode, utf8DecodeLossyAt } from "../util/utf8";

export enum RespKind { SimpleString, Error, Integer, BulkString, NullBulk, Array, NullArray }

export const RESP_OK: i32 = 0;
export const RESP_INCOMPLETE: i32 = 1;
export const RESP_MALFORMED: i32 = 2;
export const RESP_DEFAULT_MAX_DEPTH: i32 = 32;
/** Redis's own proto-max-bulk-len default (512 MB); anything longer is not a Redis reply. */
export const RESP_MAX_BULK_LENGTH: i64 = 512 * 1024 * 1024;
/** Upper bound on an array's declared element count. */
export const RESP_MAX_ARRAY_LENGTH: i64 = 1 << 24;

// Shared by every reply that has no elements / no text, to save two allocations per reply
// (allocation dominates parse time). Zero-length, so nothing can be written into it.
const NO_BYTES = new Uint8Array(0);

export class RespValue {
  kind: RespKind;
  /** Text of a simple string, error or bulk string (invalid UTF-8 shown as U+FFFD). */
  str: string = "";
  /** Value of an integer reply. */
  int: i64 = 0;
  /** Elements of an array reply (empty otherwise). */
  items: RespValue[];
  /** Exact bytes of a bulk string (binary-safe), simple string or error (empty otherwise). */
  bytes: Uint8Array = NO_BYTES;

  constructor(kind: RespKind) {
    this.kind = kind;
    this.items = new Array<RespValue>(0);
  }

  isNull(): bool { return this.kind == RespKind.NullBulk || this.kind == RespKind.NullArray; }
  isError(): bool { return this.kind == RespKind.Error; }
}

export class RespParseResult {
  constructor(
    public status: i32,
    public value: RespValue | null,
    /** Bytes of `buf` the reply occupied (from `start`); 0 unless status is RESP_OK. */
    public consumed: i32,
    /** Why the input is malformed ("" otherwise). */
    public error: string = "",
  ) {}
}

const CR: u32 = 0x0D;
const LF: u32 = 0x0A;

class RespParser {
  ptr: usize;
  len: i32;
  pos: i32;
  status: i32 = RESP_OK;
  error: string = "";
  /** Result of the last successful readInteger(). */
  intValue: i64 = 0;

  constructor(buf: Uint8Array, start: i32, public maxDepth: i32) {
    this.ptr = buf.dataStart;
    this.len = buf.length;
    this.pos = start;
  }

  // @ts-ignore: decorator
  @inline byteAt(i: i32): u32 {
    return <u32>load<u8>(this.ptr + <usize>i);
  }

  incomplete(): RespValue | null {
    this.status = RESP_INCOMPLETE;
    return null;
  }

  malformed(message: string, offset: i32): RespValue | null {
    this.status = RESP_MALFORMED;
    this.error = message + " at offset " + offset.toString();
    return null;
  }

  // Index of the CR ending the line that starts at `from`; -1 when status was set instead.
  lineEnd(from: i32): i32 {
    for (let i = from; i < this.len; i++) {
      const c = this.byteAt(i);
      if (c == LF) { this.malformed("bare LF in line", i); return -1; }
      if (c == CR) {
        if (i + 1 >= this.len) { this.incomplete(); return -1; }
        if (this.byteAt(i + 1) != LF) { this.malformed("CR not followed by LF", i + 1); return -1; }
        return i;
      }
    }
    this.incomplete();
    return -1;
  }

  // Reads a signed decimal line (integer reply or length header) at this.pos, rejecting a bad
  // byte as soon as it is seen; returns false when status was set.
  readInteger(): bool {
    const start = this.pos;
    let i = start;
    let negative = false;
    if (i < this.len && this.byteAt(i) == 0x2D) { negative = true; i++; }
    const limit: u64 = negative ? 0x8000000000000000 : 0x7FFFFFFFFFFFFFFF;
    let magnitude: u64 = 0;
    let digits = 0;
    while (i < this.len) {
      const c = this.byteAt(i);
      if (c == CR) break;
      if (c < 0x30 || c > 0x39) { this.malformed("invalid integer", i); return false; }
      const d = <u64>(c - 0x30);
      if (magnitude > (limit - d) / 10) { this.malformed("integer overflow", i); return false; }
      magnitude = magnitude * 10 + d;
      digits++;
      i++;
    }
    if (i >= this.len) { this.incomplete(); return false; }
    if (digits == 0) { this.malformed("missing digits", i); return false; }
    if (i + 1 >= this.len) { this.incomplete(); return false; }
    if (this.byteAt(i + 1) != LF) { this.malformed("CR not followed by LF", i + 1); return false; }
    this.intValue = negative ? <i64>(0 - magnitude) : <i64>magnitude;
    this.pos = i + 2;
    return true;
  }

  parseValue(depth: i32): RespValue | null {
    if (this.pos >= this.len) return this.incomplete();
    const typeAt = this.pos;
    const type = this.byteAt(typeAt);
    this.pos++;
    if (type == 0x2B || type == 0x2D) { // '+' simple string, '-' error
      const end = this.lineEnd(this.pos);
      if (end < 0) return null;
      const v = new RespValue(type == 0x2B ? RespKind.SimpleString : RespKind.Error);
      this.takeText(v, this.pos, end);
      this.pos = end + 2;
      return v;
    }
    if (type == 0x3A) { // ':' integer
      if (!this.readInteger()) return null;
      const v = new RespValue(RespKind.Integer);
      v.int = this.intValue;
      return v;
    }
    if (type == 0x24) return this.parseBulk(); // '$'
    if (type == 0x2A) return this.parseArray(depth + 1, typeAt); // '*'
    return this.malformed("unknown reply type byte 0x" + type.toString(16), typeAt);
  }

  parseBulk(): RespValue | null {
    const headerAt = this.pos;
    if (!this.readInteger()) return null;
    const n = this.intValue;
    if (n == -1) return new RespValue(RespKind.NullBulk);
    if (n < -1 || n > RESP_MAX_BULK_LENGTH) return this.malformed("invalid bulk length " + n.toString(), headerAt);
    const dataStart = this.pos;
    const dataEnd = <i64>dataStart + n;
    // Validate the terminating CRLF as far as it has arrived.
    if (dataEnd < <i64>this.len && this.byteAt(<i32>dataEnd) != CR) return this.malformed("bulk string not followed by CR", <i32>dataEnd);
    if (dataEnd + 1 < <i64>this.len && this.byteAt(<i32>dataEnd + 1) != LF) return this.malformed("bulk string not followed by LF", <i32>dataEnd + 1);
    if (dataEnd + 2 > <i64>this.len) return this.incomplete();
    const v = new RespValue(RespKind.BulkString);
    this.takeText(v, dataStart, <i32>dataEnd);
    this.pos = <i32>dataEnd + 2;
    return v;
  }

  parseArray(depth: i32, typeAt: i32): RespValue | null {
    if (depth > this.maxDepth) return this.malformed("nesting deeper than " + this.maxDepth.toString(), typeAt);
    const headerAt = this.pos;
    if (!this.readInteger()) return null;
    const n = this.intValue;
    if (n == -1) return new RespValue(RespKind.NullArray);
    if (n < -1 || n > RESP_MAX_ARRAY_LENGTH) return this.malformed("invalid array length " + n.toString(), headerAt);
    const v = new RespValue(RespKind.Array);
    const count = <i32>n;
    for (let k = 0; k < count; k++) {
      const item = this.parseValue(depth);
      if (!item) return null;
      v.items.push(item);
    }
    return v;
  }

  takeText(v: RespValue, start: i32, end: i32): void {
    const n = end - start;
    const bytes = new Uint8Array(n);
    memory.copy(bytes.dataStart, this.ptr + <usize>start, <usize>n);
    v.bytes = bytes;
    v.str = utf8DecodeLossyAt(this.ptr + <usize>start, n);
  }
}

/** Parses one reply starting at byte `start` of `buf`. */
export function parseResp(buf: Uint8Array, start: i32 = 0, maxDepth: i32 = RESP_DEFAULT_MAX_DEPTH): RespParseResult {
  if (start < 0) start = 0;
  const parser = new RespParser(buf, start, maxDepth);
  const value = parser.parseValue(0);
  if (!value || parser.status != RESP_OK) return new RespParseResult(parser.status, null, 0, parser.error);
  return new RespParseResult(RESP_OK, value, parser.pos - start);
}

// Number of decimal digits of a non-negative i32.
function decimalLength(n: i32): i32 {
  let digits = 1;
  while (n >= 10) { n /= 10; digits++; }
  return digits;
}

// Writes `prefix`, the decimal `n` (>= 0) and CRLF at `o`; returns the new write position.
function writeHeader(o: usize, prefix: u8, n: i32): usize {
  store<u8>(o, prefix);
  const digits = decimalLength(n);
  let p = o + 1 + <usize>digits;
  let v = n;
  for (let k = 0; k < digits; k++) {
    p--;
    store<u8>(p, <u8>(0x30 + v % 10));
    v /= 10;
  }
  p = o + 1 + <usize>digits;
  store<u16>(p, 0x0A0D); // "\r\n" in little-endian
  return p + 2;
}

/** A Redis command as a RESP array of bulk strings. */
export class RespCommand {
  private args: Uint8Array[] = [];

  /** Appends a text argument (sent as its UTF-8 bytes). */
  arg(s: string): RespCommand {
    this.args.push(utf8Encode(s));
    return this;
  }

  /** Appends a binary argument (copied when the command is serialized). */
  argBytes(b: Uint8Array): RespCommand {
    this.args.push(b);
    return this;
  }

  /** Appends an integer argument in decimal. */
  argInt(n: i64): RespCommand {
    this.args.push(utf8Encode(n.toString()));
    return this;
  }

  /** Number of arguments so far (the command name counts). */
  argCount(): i32 {
    return this.args.length;
  }

  /** Wire bytes: `*N\r\n` then `$len\r\n<bytes>\r\n` per argument. */
  toBytes(): Uint8Array {
    const args = this.args;
    const count = args.length;
    let size = 1 + decimalLength(count) + 2;
    for (let i = 0; i < count; i++) {
      const n = unchecked(args[i]).length;
      size += 1 + decimalLength(n) + 2 + n + 2;
    }
    const out = new Uint8Array(size);
    let o = writeHeader(out.dataStart, 0x2A, count);
    for (let i = 0; i < count; i++) {
      const a = unchecked(args[i]);
      o = writeHeader(o, 0x24, a.length);
      memory.copy(o, a.dataStart, <usize>a.length);
      o += <usize>a.length;
      store<u16>(o, 0x0A0D);
      o += 2;
    }
    return out;
  }
}
