// A parsed JSON value: a view of one entry of the parse's tape (tape.ts). Every accessor is total
// (wrong kind -> neutral default, never a throw), because the plugin reads untrusted request
// bodies and user config on the request path. Nothing is decoded at parse time: strings are
// decoded, numbers converted and child values created only when asked for, so a 128 KB chat body
// that the plugin only hashes never becomes AssemblyScript strings or objects.
// rawStart/rawEnd are byte offsets of the value's own text in the source (strings include their
// quotes): Higress hashes non-string message content as its raw JSON text.
// Hot paths that must not allocate (prefix blocks) walk the tape with the index functions at the
// end of this file instead of creating JsonValues.
import { utf8DecodeLossy, utf8DecodeLossyAt } from "../util/utf8";
import { ScratchBytes, asciiUnescapedLength, unescapeAsciiToString, unescapeJsonString, unescapeJsonStringInto } from "./unescape";
import { JsonTape, TAPE_ESCAPES, TAPE_KIND_MASK } from "./tape";

export enum JsonKind { Null, Bool, Number, String, Array, Object }

export class JsonValue {
  kind: JsonKind;
  /** The parsed document's bytes (shared by all values of one parse). */
  src: Uint8Array;
  rawStart: i32;
  rawEnd: i32;
  /** String with at least one backslash escape (decoding must unescape, not just slice). */
  hasEscapes: bool;
  private children: JsonValue[] | null = null;

  constructor(public tape: JsonTape, src: Uint8Array, public index: i32) {
    const tag = tape.at(index);
    this.kind = <JsonKind>(tag & TAPE_KIND_MASK);
    this.hasEscapes = (tag & TAPE_ESCAPES) != 0;
    this.src = src;
    this.rawStart = tape.at(index + 1);
    this.rawEnd = tape.at(index + 2);
  }

  isNull(): bool { return this.kind == JsonKind.Null; }
  isBool(): bool { return this.kind == JsonKind.Bool; }
  isNumber(): bool { return this.kind == JsonKind.Number; }
  isString(): bool { return this.kind == JsonKind.String; }
  isArray(): bool { return this.kind == JsonKind.Array; }
  isObject(): bool { return this.kind == JsonKind.Object; }

  /** Decoded string value ("" if not a string). Invalid UTF-8 becomes U+FFFD. */
  str(): string {
    if (this.kind != JsonKind.String) return "";
    if (!this.hasEscapes) return utf8DecodeLossy(this.src, this.rawStart + 1, this.rawEnd - 1);
    // ASCII text with escapes (Higress's /metrics JSON string) decodes in one pass.
    const direct = unescapeAsciiToString(this.src.dataStart + <usize>(this.rawStart + 1), this.rawEnd - this.rawStart - 2);
    if (direct !== null) return direct;
    return utf8DecodeLossy(this.strBytes());
  }

  /** str().length (UTF-16 units), without building the string for ASCII text with at most
   *  one-character escapes (a prompt's usual text: a 100 KB prompt is not copied to count it). */
  strLength(): i32 { return tapeStrLength(this.tape, this.src, this.index); }

  /**
   * Decoded string value as UTF-8 bytes (empty if not a string). Without escapes this is a view
   * of the source (no copy); bytes that are not valid UTF-8 are passed through unchanged, as Go
   * does, so hashes match Higress byte for byte.
   */
  strBytes(): Uint8Array {
    if (this.kind != JsonKind.String) return new Uint8Array(0);
    if (!this.hasEscapes) return this.src.subarray(this.rawStart + 1, this.rawEnd - 1);
    return unescapeJsonString(this.src, this.rawStart + 1, this.rawEnd - 1);
  }

  /** strBytes() decoded into `scratch` (no allocation once it is large enough); the view is
   *  valid until the scratch's next use. */
  strBytesIn(scratch: ScratchBytes): Uint8Array {
    if (this.kind != JsonKind.String) return new Uint8Array(0);
    if (!this.hasEscapes) return this.src.subarray(this.rawStart + 1, this.rawEnd - 1);
    return unescapeJsonStringInto(this.src, this.rawStart + 1, this.rawEnd - 1, scratch);
  }

  /** Number value (0 if not a number). Converted from the text on each call. */
  num(): f64 {
    if (this.kind != JsonKind.Number) return 0;
    return numberAt(this.src.dataStart, this.rawStart, this.rawEnd);
  }

  /** Bool value (false if not a bool). */
  bool(): bool { return this.kind == JsonKind.Bool && this.rawEnd - this.rawStart == 4; }

  /** Array elements (empty if not an array). The returned array is the value's own: do not mutate. */
  arr(): JsonValue[] {
    if (this.kind != JsonKind.Array) return new Array<JsonValue>(0);
    let c = this.children;
    if (c === null) {
      c = new Array<JsonValue>();
      const end = tapeNext(this.tape, this.index);
      for (let i = this.index + 4; i < end; i = tapeNext(this.tape, i)) c.push(new JsonValue(this.tape, this.src, i));
      this.children = c;
    }
    return c;
  }

  /** Member count of an object, element count of an array, else 0. */
  size(): i32 {
    if (this.kind == JsonKind.Array) return this.arr().length;
    if (this.kind != JsonKind.Object) return 0;
    let n = 0;
    const end = tapeNext(this.tape, this.index);
    for (let i = this.index + 4; i < end; i = tapeNext(this.tape, i + 4)) n++;
    return n;
  }

  /** First member named `key` of an object; null if absent or not an object. */
  get(key: string): JsonValue | null {
    const i = tapeMember(this.tape, this.src, this.index, key);
    return i < 0 ? null : new JsonValue(this.tape, this.src, i);
  }

  /** Member names of an object in document order (duplicates kept); empty if not an object. */
  keys(): string[] {
    const out = new Array<string>();
    if (this.kind != JsonKind.Object) return out;
    const end = tapeNext(this.tape, this.index);
    for (let i = this.index + 4; i < end; i = tapeNext(this.tape, i + 4)) out.push(memberName(this.tape, this.src, i));
    return out;
  }

  /** The value's own JSON text as a view of the source bytes (no copy). */
  raw(): Uint8Array {
    return this.src.subarray(this.rawStart, this.rawEnd);
  }

  /** The value's own JSON text as a string. */
  rawText(): string {
    return utf8DecodeLossy(this.src, this.rawStart, this.rawEnd);
  }
}

// ---- Tape index functions (no allocation unless a member name has escapes) ----

// @ts-ignore: decorator
@inline export function tapeKind(tape: JsonTape, i: i32): JsonKind {
  return <JsonKind>(tape.at(i) & TAPE_KIND_MASK);
}

// @ts-ignore: decorator
@inline export function tapeNext(tape: JsonTape, i: i32): i32 {
  return tape.at(i + 3);
}

/** Tape index of the value of the first member `key` of the object at `obj`, or -1. */
export function tapeMember(tape: JsonTape, src: Uint8Array, obj: i32, key: string): i32 {
  if (tapeKind(tape, obj) != JsonKind.Object) return -1;
  const end = tapeNext(tape, obj);
  for (let i = obj + 4; i < end; i = tapeNext(tape, i + 4)) {
    if (nameEquals(tape, src, i, key)) return i + 4;
  }
  return -1;
}

// Whether the member name at tape index `i` is `key`: bytes against UTF-16 units while both are
// ASCII; escapes or other characters fall back to decoding the name.
function nameEquals(tape: JsonTape, src: Uint8Array, i: i32, key: string): bool {
  const start = tape.at(i + 1) + 1;
  const len = tape.at(i + 2) - 1 - start;
  if ((tape.at(i) & TAPE_ESCAPES) == 0) {
    const n = key.length;
    const p = src.dataStart + <usize>start;
    const k = changetype<usize>(key);
    let ascii = true;
    for (let j = 0; j < n && j < len; j++) {
      const c = <u32>load<u16>(k + (<usize>j << 1));
      const b = <u32>load<u8>(p + <usize>j);
      if (c >= 0x80 || b >= 0x80) { ascii = false; break; }
      if (c != b) return false;
    }
    // All ASCII so far: any leftover on either side means different lengths once decoded.
    if (ascii) return n == len;
  }
  return memberName(tape, src, i) == key;
}

/** JsonValue.strLength() of the value at tape index `i` (0 if not a string), without a JsonValue
 *  unless the text must be decoded (non-ASCII, or a \u escape). */
export function tapeStrLength(tape: JsonTape, src: Uint8Array, i: i32): i32 {
  if (tapeKind(tape, i) != JsonKind.String) return 0;
  const start = tape.at(i + 1) + 1;
  const n = asciiUnescapedLength(src.dataStart + <usize>start, tape.at(i + 2) - 1 - start);
  return n >= 0 ? n : new JsonValue(tape, src, i).str().length;
}

/** The decoded member name at tape index `i` (a TAPE_KEY entry). */
export function memberName(tape: JsonTape, src: Uint8Array, i: i32): string {
  const start = tape.at(i + 1) + 1;
  const end = tape.at(i + 2) - 1;
  if ((tape.at(i) & TAPE_ESCAPES) == 0) return utf8DecodeLossyAt(src.dataStart + <usize>start, end - start);
  return utf8DecodeLossy(unescapeJsonString(src, start, end));
}

/** The number whose validated JSON text is src[start, end) (ptr = src.dataStart). */
export function numberAt(ptr: usize, start: i32, end: i32): f64 {
  let i = start;
  const negative = load<u8>(ptr + <usize>i) == 0x2D;
  if (negative) i++;
  // Integers of up to 15 digits are exact in f64: accumulate them directly.
  if (end - i <= 15) {
    let v: f64 = 0;
    let j = i;
    for (; j < end; j++) {
      const c = <u32>load<u8>(ptr + <usize>j);
      if (c < 0x30 || c > 0x39) break;
      v = v * 10 + <f64>(c - 0x30);
    }
    if (j == end) return negative ? -v : v;
  }
  // The text is pure ASCII, so a byte-to-unit decode is exact; parseFloat rounds correctly.
  return parseFloat(utf8DecodeLossyAt(ptr + <usize>start, end - start));
}
