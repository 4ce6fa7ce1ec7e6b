// One string member of a flat JSON object, validated and decoded in a single pass into reused
// room: Higress's per-host health-check value `{"health_status":"Healthy","metrics":"<64 KiB>"}`
// would otherwise cost a validating parse (parse.ts) and then a second pass to unescape, both
// slowed by an escape every few bytes (\" around every label value, \n on every line).
// Only the common shape is handled here: an object whose member names have no escapes and whose
// values are all strings. Anything else (other values, escaped names, any error) answers null and
// the caller uses parseJson, so every result equals what parseJson + JsonValue give: same
// validation (escapes, control characters, trailing bytes), first member of the name wins, same
// decoding (unescapeInto). Pure; never throws.
import { ScratchBytes, escapeLength, readHex4, simpleEscape, unescapeInto } from "./unescape";

const ONES: u64 = 0x0101010101010101;
const HIGHS: u64 = 0x8080808080808080;

// Nonzero if any of the 8 bytes is '"', '\\' or below 0x20 (the lowest flag is exact).
// @ts-ignore: decorator
@inline function special(v: u64): u64 {
  const q = v ^ (ONES * 0x22);
  const b = v ^ (ONES * 0x5C);
  return (((q - ONES) & ~q) | ((b - ONES) & ~b) | ((v - ONES * 0x20) & ~v)) & HIGHS;
}

// @ts-ignore: decorator
@inline function skipSpace(p: usize, i: i32, n: i32): i32 {
  while (i < n) {
    const c = load<u8>(p + <usize>i);
    if (c != 0x20 && c != 0x0A && c != 0x0D && c != 0x09) break;
    i++;
  }
  return i;
}

/** Bytes written by the last scanString (when it wrote). */
let decodedLength: i32 = 0;

/**
 * The string starting at the quote at `i`: validates it as parse.ts does and, when `out` is not 0,
 * writes its decoded bytes there (room for the raw length). Returns the index after the closing
 * quote, or -1 when it is not a valid string.
 */
function scanString(p: usize, i: i32, n: i32, out: usize): i32 {
  i++;
  let o = out;
  while (true) {
    while (i + 8 <= n) {
      const v = load<u64>(p + <usize>i);
      // The 8-byte store stays inside the room: the output is never ahead of the input.
      if (out != 0) store<u64>(o, v);
      const hit = special(v);
      if (hit != 0) {
        const k = <i32>(ctz<u64>(hit) >> 3);
        i += k;
        if (out != 0) o += <usize>k;
        break;
      }
      i += 8;
      if (out != 0) o += 8;
    }
    if (i >= n) return -1;
    const c = <u32>load<u8>(p + <usize>i);
    if (c == 0x22) break;
    if (c < 0x20) return -1;
    if (c != 0x5C) {
      // A byte flagged in a tail shorter than 8: plain text.
      if (out != 0) store<u8>(o++, <u8>c);
      i++;
      continue;
    }
    if (i + 1 >= n) return -1;
    const e = <u32>load<u8>(p + <usize>(i + 1));
    const simple = simpleEscape(e);
    if (simple >= 0) {
      if (out != 0) store<u8>(o++, <u8>simple);
      i += 2;
      continue;
    }
    if (e != 0x75 || i + 6 > n || readHex4(p + <usize>(i + 2)) < 0) return -1;
    // \uXXXX (a surrogate may swallow the next escape): decoded exactly as unescapeInto does.
    const used = escapeLength(p, i, n);
    if (out != 0) o += <usize>unescapeInto(p + <usize>i, used, o);
    i += used;
  }
  if (out != 0) decodedLength = <i32>(o - out);
  return i + 1;
}

/**
 * The decoded value of the first member `key` (ASCII, no escapes) of the object `src`, as a view
 * of `scratch` (valid until its next use); empty when the object has no such member; null when
 * `src` is not of the handled shape (the caller then asks parseJson).
 */
export function stringMemberInto(src: Uint8Array, key: string, scratch: ScratchBytes): Uint8Array | null {
  const p = src.dataStart;
  const n = src.length;
  let i = skipSpace(p, 0, n);
  if (i >= n || load<u8>(p + <usize>i) != 0x7B /* { */) return null;
  i = skipSpace(p, i + 1, n);
  let found = false;
  let start = 0;
  let length = 0;
  if (i < n && load<u8>(p + <usize>i) == 0x7D /* } */) {
    i++;
  } else {
    while (true) {
      if (i >= n || load<u8>(p + <usize>i) != 0x22) return null;
      // Member name: plain text only, compared raw.
      const nameStart = i + 1;
      let j = nameStart;
      while (j < n) {
        const c = load<u8>(p + <usize>j);
        if (c == 0x22 || c == 0x5C || c < 0x20) break;
        j++;
      }
      if (j >= n || load<u8>(p + <usize>j) != 0x22) return null;
      const wanted = !found && j - nameStart == key.length && sameAscii(p + <usize>nameStart, key);
      i = skipSpace(p, j + 1, n);
      if (i >= n || load<u8>(p + <usize>i) != 0x3A /* : */) return null;
      i = skipSpace(p, i + 1, n);
      if (i >= n || load<u8>(p + <usize>i) != 0x22) return null;
      if (wanted) {
        const room = scratch.room(n - i);
        const end = scanString(p, i, n, room.dataStart);
        if (end < 0) return null;
        found = true;
        start = 0;
        length = decodedLength;
        i = end;
      } else {
        i = scanString(p, i, n, 0);
        if (i < 0) return null;
      }
      i = skipSpace(p, i, n);
      if (i >= n) return null;
      const c = load<u8>(p + <usize>i);
      if (c == 0x7D) { i++; break; }
      if (c != 0x2C /* , */) return null;
      i = skipSpace(p, i + 1, n);
    }
  }
  if (skipSpace(p, i, n) != n) return null;
  if (!found) return new Uint8Array(0);
  return scratch.room(0).subarray(start, start + length);
}

function sameAscii(p: usize, s: string): bool {
  for (let k = 0; k < s.length; k++) {
    if (<u32>load<u8>(p + <usize>k) != <u32>s.charCodeAt(k)) return false;
  }
  return true;
}
