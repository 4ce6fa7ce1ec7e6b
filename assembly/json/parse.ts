// JSON parser (RFC 8259) for request bodies and plugin configuration.
// Input: UTF-8 bytes. Output: a JsonParseResult; never throws, whatever the input: errors come
// back as ok=false with a message naming what was expected and the byte offset
// ("expected ':' at offset 17"). One validating pass over the bytes that writes only the tape
// (tape.ts): no object, string or number is created here; values are read on demand through
// JsonValue. String text is skipped 8 bytes at a time. Nesting beyond maxDepth is an error, not
// a stack overflow. Invalid UTF-8 inside strings is tolerated (passed through).
import { JsonKind, JsonValue } from "./value";
import { readHex4, simpleEscape } from "./unescape";
import { JsonTape, TAPE_ESCAPES, TAPE_KEY } from "./tape";
import { utf8Encode } from "../util/utf8";

export const JSON_DEFAULT_MAX_DEPTH: i32 = 64;

export class JsonParseResult {
  constructor(
    public ok: bool,
    public value: JsonValue | null,
    public error: string,
    public errorOffset: i32,
  ) {}
}

const SWAR_ONES: u64 = 0x0101010101010101;
const SWAR_HIGHS: u64 = 0x8080808080808080;

// Nonzero if any byte of the 8 in `v` is '"', '\\' or below 0x20 (may flag extra bytes after a
// true hit, never misses one, so the lowest flag is exact), letting plain string text be skipped
// 8 bytes at a time.
// @ts-ignore: decorator
@inline function hasStringSpecialByte(v: u64): u64 {
  const q = v ^ (SWAR_ONES * 0x22);
  const b = v ^ (SWAR_ONES * 0x5C);
  return (((q - SWAR_ONES) & ~q) | ((b - SWAR_ONES) & ~b) | ((v - SWAR_ONES * 0x20) & ~v)) & SWAR_HIGHS;
}

// Text for a byte in messages: the character if printable ASCII, else its hex value.
function describeByte(c: u32): string {
  if (c >= 0x20 && c < 0x7F) return "'" + String.fromCharCode(<i32>c) + "'";
  return "byte 0x" + (c < 16 ? "0" : "") + c.toString(16).toUpperCase();
}

/** Values (and member names) a document may hold: 4 Mi entries are a 64 MiB tape, and the values a
 *  policy materialises of one array stay within a few hundred MiB. A body of `[0,0,0,...]` (2 bytes
 *  a value) of 24 MiB once exhausted the VM's memory; beyond this it is not JSON to the plugin. */
export const JSON_MAX_ENTRIES: i32 = 1 << 22;

class JsonParser {
  ptr: usize;
  len: i32;
  pos: i32 = 0;
  failed: bool = false;
  error: string = "";
  errorOffset: i32 = -1;
  tape: JsonTape;

  constructor(public src: Uint8Array, public maxDepth: i32, public maxEntries: i32 = JSON_MAX_ENTRIES) {
    // Chat bodies need about one entry per 40 bytes; the tape doubles when that is short.
    this.tape = new JsonTape(src.length >> 5);
    this.ptr = src.dataStart;
    this.len = src.length;
  }

  // @ts-ignore: decorator
  @inline byteAt(i: i32): u32 {
    return <u32>load<u8>(this.ptr + <usize>i);
  }

  fail(message: string, offset: i32): bool {
    if (!this.failed) {
      this.failed = true;
      this.error = message + " at offset " + offset.toString();
      this.errorOffset = offset;
    }
    return false;
  }

  failExpected(what: string): bool {
    if (this.pos >= this.len) return this.fail("unexpected end of input, expected " + what, this.pos);
    return this.fail("expected " + what + ", got " + describeByte(this.byteAt(this.pos)), this.pos);
  }

  skipWhitespace(): void {
    let i = this.pos;
    const n = this.len;
    while (i < n) {
      const c = this.byteAt(i);
      if (c != 0x20 && c != 0x0A && c != 0x0D && c != 0x09) break;
      i++;
    }
    this.pos = i;
  }

  parseValue(depth: i32): bool {
    if (this.tape.length >= this.maxEntries << 2) return this.fail("more than " + this.maxEntries.toString() + " values", this.pos);
    this.skipWhitespace();
    if (this.pos >= this.len) return this.fail("unexpected end of input, expected a value", this.pos);
    const c = this.byteAt(this.pos);
    if (c == 0x22) return this.parseString(<i32>JsonKind.String);
    if (c == 0x7B) return this.parseObject(depth + 1);
    if (c == 0x5B) return this.parseArray(depth + 1);
    if (c == 0x2D || (c >= 0x30 && c <= 0x39)) return this.parseNumber();
    if (c == 0x74) return this.parseLiteral("true", JsonKind.Bool);
    if (c == 0x66) return this.parseLiteral("false", JsonKind.Bool);
    if (c == 0x6E) return this.parseLiteral("null", JsonKind.Null);
    return this.fail("unexpected " + describeByte(c) + ", expected a value", this.pos);
  }

  parseLiteral(word: string, kind: JsonKind): bool {
    const start = this.pos;
    const n = word.length;
    for (let k = 0; k < n; k++) {
      if (start + k >= this.len) return this.fail("unexpected end of input in literal '" + word + "'", start + k);
      if (this.byteAt(start + k) != <u32>word.charCodeAt(k)) {
        return this.fail("invalid literal, expected '" + word + "'", start);
      }
    }
    this.pos = start + n;
    this.tape.push(<i32>kind, start, this.pos);
    return true;
  }

  // Validates a string literal starting at the opening quote and writes its entry (a value or a
  // member name, `tag`), flagged when it has escapes.
  parseString(tag: i32): bool {
    const start = this.pos;
    const n = this.len;
    let i = start + 1;
    let escapes = 0;
    while (true) {
      // 8 bytes at a time; on a hit, jump straight to the first flagged byte (the lowest flag is
      // always a true one).
      while (i + 8 <= n) {
        const special = hasStringSpecialByte(load<u64>(this.ptr + <usize>i));
        if (special != 0) { i += <i32>(ctz<u64>(special) >> 3); break; }
        i += 8;
      }
      if (i >= n) return this.fail("unterminated string starting", start);
      const c = this.byteAt(i);
      if (c == 0x22) break;
      if (c == 0x5C) {
        escapes = TAPE_ESCAPES;
        if (i + 1 >= n) return this.fail("unterminated string starting", start);
        const e = this.byteAt(i + 1);
        if (e == 0x75) {
          if (i + 6 > n) return this.fail("unterminated string starting", start);
          if (readHex4(this.ptr + <usize>(i + 2)) < 0) return this.fail("invalid \\u escape", i);
          i += 6;
        } else if (simpleEscape(e) >= 0) {
          i += 2;
        } else {
          return this.fail("invalid escape \\" + (e >= 0x20 && e < 0x7F ? String.fromCharCode(<i32>e) : describeByte(e)), i);
        }
        continue;
      }
      if (c < 0x20) return this.fail("unescaped control character " + describeByte(c) + " in string", i);
      i++;
    }
    this.pos = i + 1;
    this.tape.push(tag | escapes, start, this.pos);
    return true;
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?  (validated only; JsonValue.num converts)
  parseNumber(): bool {
    const start = this.pos;
    const n = this.len;
    let i = start;
    if (this.byteAt(i) == 0x2D) i++;
    if (i >= n) return this.fail("unexpected end of input in number", i);
    let c = this.byteAt(i);
    if (c < 0x30 || c > 0x39) return this.fail("invalid number, expected a digit", i);
    if (c == 0x30) {
      i++;
    } else {
      while (i < n && this.byteAt(i) >= 0x30 && this.byteAt(i) <= 0x39) i++;
    }
    if (i < n && this.byteAt(i) == 0x2E) {
      i++;
      const fracStart = i;
      while (i < n && this.byteAt(i) >= 0x30 && this.byteAt(i) <= 0x39) i++;
      if (i == fracStart) return this.fail(i >= n ? "unexpected end of input in number" : "invalid number, expected a digit after '.'", i);
    }
    if (i < n && (this.byteAt(i) | 0x20) == 0x65) {
      i++;
      if (i < n && (this.byteAt(i) == 0x2B || this.byteAt(i) == 0x2D)) i++;
      const expStart = i;
      while (i < n && this.byteAt(i) >= 0x30 && this.byteAt(i) <= 0x39) i++;
      if (i == expStart) return this.fail(i >= n ? "unexpected end of input in number" : "invalid number, expected an exponent digit", i);
    }
    this.pos = i;
    this.tape.push(<i32>JsonKind.Number, start, i);
    return true;
  }

  parseArray(depth: i32): bool {
    const start = this.pos;
    if (depth > this.maxDepth) return this.fail("nesting deeper than " + this.maxDepth.toString(), start);
    const at = this.tape.push(<i32>JsonKind.Array, start, start);
    this.pos++;
    this.skipWhitespace();
    if (this.pos < this.len && this.byteAt(this.pos) == 0x5D) {
      this.pos++;
    } else {
      while (true) {
        if (!this.parseValue(depth)) return false;
        this.skipWhitespace();
        if (this.pos >= this.len) return this.failExpected("',' or ']'");
        const c = this.byteAt(this.pos);
        this.pos++;
        if (c == 0x5D) break;
        if (c != 0x2C) { this.pos--; return this.failExpected("',' or ']'"); }
      }
    }
    this.close(at);
    return true;
  }

  parseObject(depth: i32): bool {
    const start = this.pos;
    if (depth > this.maxDepth) return this.fail("nesting deeper than " + this.maxDepth.toString(), start);
    const at = this.tape.push(<i32>JsonKind.Object, start, start);
    this.pos++;
    this.skipWhitespace();
    if (this.pos < this.len && this.byteAt(this.pos) == 0x7D) {
      this.pos++;
    } else {
      let members = 0;
      while (true) {
        this.skipWhitespace();
        if (this.pos >= this.len || this.byteAt(this.pos) != 0x22) {
          return this.failExpected(members == 0 ? "'\"' or '}'" : "'\"'");
        }
        if (!this.parseString(TAPE_KEY)) return false;
        this.skipWhitespace();
        if (this.pos >= this.len || this.byteAt(this.pos) != 0x3A) return this.failExpected("':'");
        this.pos++;
        if (!this.parseValue(depth)) return false;
        members++;
        this.skipWhitespace();
        if (this.pos >= this.len) return this.failExpected("',' or '}'");
        const c = this.byteAt(this.pos);
        if (c == 0x7D) { this.pos++; break; }
        if (c != 0x2C) return this.failExpected("',' or '}'");
        this.pos++;
      }
    }
    this.close(at);
    return true;
  }

  // A container's entry gets its end offset and the index past its last descendant.
  close(at: i32): void {
    this.tape.set(at + 2, this.pos);
    this.tape.set(at + 3, this.tape.length);
  }
}

/** Parses one JSON document from UTF-8 bytes; offsets in errors and rawStart/rawEnd are byte offsets. */
export function parseJson(src: Uint8Array, maxDepth: i32 = JSON_DEFAULT_MAX_DEPTH, maxEntries: i32 = JSON_MAX_ENTRIES): JsonParseResult {
  const parser = new JsonParser(src, maxDepth, maxEntries);
  if (parser.parseValue(0)) {
    parser.skipWhitespace();
    if (parser.pos < parser.len) {
      parser.fail("unexpected trailing " + describeByte(parser.byteAt(parser.pos)) + " after the document", parser.pos);
    }
  }
  if (parser.failed) return new JsonParseResult(false, null, parser.error, parser.errorOffset);
  return new JsonParseResult(true, new JsonValue(parser.tape, src, 0), "", -1);
}

/** parseJson over the UTF-8 encoding of `src` (offsets are UTF-8 byte offsets). */
export function parseJsonString(src: string, maxDepth: i32 = JSON_DEFAULT_MAX_DEPTH): JsonParseResult {
  return parseJson(utf8Encode(src), maxDepth);
}
