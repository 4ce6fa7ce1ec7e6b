// Decodes the body of a JSON string literal (between the quotes) into UTF-8 bytes, exactly as
// gjson v1.18.0 does (`unescape` in gjson.go, which Higress's String() uses), so prefix keys of
// escaped text match Higress's byte for byte:
//   - a \uXXXX in D800-DFFF (either half) followed by another \uXXXX consumes both: a valid
//     high+low pair is one code point, anything else (high + non-low, low + anything) is ONE
//     U+FFFD, and the second unit is gone ("\ud83d\u0041" -> EF BF BD, no "A");
//   - a surrogate not followed by \u is U+FFFD (utf8.EncodeRune of a surrogate);
//   - raw bytes, including invalid UTF-8, are copied unchanged.
// (Go's encoding/json differs: it would keep the "A".) The parser has already validated the
// escapes; this still never throws on bad input (an unknown escape keeps its backslash) so it is
// safe on any range. Runs without a backslash are copied 8 bytes at a time.

// Value of one hex digit (either case), or -1.
function hexDigitValue(c: u32): i32 {
  if (c >= 48 && c <= 57) return <i32>(c - 48);
  if (c >= 65 && c <= 70) return <i32>(c - 55);
  if (c >= 97 && c <= 102) return <i32>(c - 87);
  return -1;
}

/** Value of 4 hex digits at ptr, or -1. */
export function readHex4(ptr: usize): i32 {
  let v = 0;
  for (let k = 0; k < 4; k++) {
    const d = hexDigitValue(<u32>load<u8>(ptr + <usize>k));
    if (d < 0) return -1;
    v = (v << 4) | d;
  }
  return v;
}

// The byte a one-letter escape \<e> stands for (\" \\ \/ \b \f \n \r \t), or -1.
export function simpleEscape(e: u32): i32 {
  switch (e) {
    case 0x22: return 0x22;
    case 0x5C: return 0x5C;
    case 0x2F: return 0x2F;
    case 0x62: return 0x08;
    case 0x66: return 0x0C;
    case 0x6E: return 0x0A;
    case 0x72: return 0x0D;
    case 0x74: return 0x09;
  }
  return -1;
}

// Writes code point `cp` as UTF-8 at `o`; returns the byte count.
function writeUtf8(o: usize, cp: u32): usize {
  if (cp < 0x80) { store<u8>(o, <u8>cp); return 1; }
  if (cp < 0x800) {
    store<u8>(o, <u8>(0xC0 | (cp >> 6)));
    store<u8>(o, <u8>(0x80 | (cp & 63)), 1);
    return 2;
  }
  if (cp < 0x10000) {
    store<u8>(o, <u8>(0xE0 | (cp >> 12)));
    store<u8>(o, <u8>(0x80 | ((cp >> 6) & 63)), 1);
    store<u8>(o, <u8>(0x80 | (cp & 63)), 2);
    return 3;
  }
  store<u8>(o, <u8>(0xF0 | (cp >> 18)));
  store<u8>(o, <u8>(0x80 | ((cp >> 12) & 63)), 1);
  store<u8>(o, <u8>(0x80 | ((cp >> 6) & 63)), 2);
  store<u8>(o, <u8>(0x80 | (cp & 63)), 3);
  return 4;
}

/** UTF-8 bytes of the JSON string body src[start, end) with escapes decoded. */
export function unescapeJsonString(src: Uint8Array, start: i32, end: i32): Uint8Array {
  if (start < 0) start = 0;
  if (end > src.length) end = src.length;
  if (start >= end) return new Uint8Array(0);
  // Decoded text is never longer than the escaped text (\uXXXX = 6 bytes -> at most 3;
  // a 12-byte surrogate pair -> 4).
  const out = new Uint8Array(end - start);
  return out.subarray(0, unescapeInto(src.dataStart + <usize>start, end - start, out.dataStart));
}

/**
 * Output room reused across decodes (one per owner), so decoding a 64 KiB string again and again
 * (Higress's /metrics text) allocates nothing once the room is large enough. A view taken from it
 * is valid until the owner's next decode.
 */
export class ScratchBytes {
  private buffer: Uint8Array = new Uint8Array(0);

  /** At least `n` bytes of room (grown by doubling; old contents are not kept). */
  room(n: i32): Uint8Array {
    if (this.buffer.length < n) this.buffer = new Uint8Array(max(n, this.buffer.length << 1));
    return this.buffer;
  }
}

/** unescapeJsonString into `scratch`'s room: a view of the decoded bytes, valid until its next use. */
export function unescapeJsonStringInto(src: Uint8Array, start: i32, end: i32, scratch: ScratchBytes): Uint8Array {
  if (start < 0) start = 0;
  if (end > src.length) end = src.length;
  if (start >= end) return new Uint8Array(0);
  const out = scratch.room(end - start);
  return out.subarray(0, unescapeInto(src.dataStart + <usize>start, end - start, out.dataStart));
}

const ONES: u64 = 0x0101010101010101;
const HIGHS: u64 = 0x8080808080808080;
const BACKSLASHES: u64 = 0x5C5C5C5C5C5C5C5C;

// The bytes from p+i, 8 at a time, before the first backslash (and, with stopAtHigh, the first
// byte >= 0x80), up to the last whole 8-byte word before len: the caller goes on byte by byte.
// With o != 0 each word read is also stored at o + its offset (unescapeInto's copy as it scans).
// @ts-ignore: decorator
@inline function plainRun(p: usize, i: i32, len: i32, o: usize, stopAtHigh: bool): i32 {
  let k = 0;
  while (i + k + 8 <= len) {
    const v = load<u64>(p + <usize>(i + k));
    const x = v ^ BACKSLASHES;
    let hit = (x - ONES) & ~x & HIGHS;
    if (stopAtHigh) hit |= v & HIGHS;
    if (o != 0) store<u64>(o + <usize>k, v);
    if (hit != 0) return k + <i32>(ctz<u64>(hit) >> 3);
    k += 8;
  }
  return k;
}

/** Decodes `len` bytes of escaped string body at `p` into `o` (room for `len` bytes); returns the
 *  decoded length. */
export function unescapeInto(p: usize, len: i32, o0: usize): i32 {
  let o = o0;
  let i = 0;
  while (i < len) {
    // Copy 8 bytes at a time up to the next backslash (the 8-byte store stays inside `o`'s room:
    // the output is never ahead of the input).
    const k = plainRun(p, i, len, o, false);
    o += <usize>k;
    i += k;
    if (i >= len) break;
    const c = <u32>load<u8>(p + <usize>i);
    if (c != 0x5C || i + 1 >= len) {
      store<u8>(o++, <u8>c);
      i++;
      continue;
    }
    const e = <u32>load<u8>(p + <usize>(i + 1));
    const simple = simpleEscape(e);
    if (simple >= 0) {
      store<u8>(o++, <u8>simple);
      i += 2;
      continue;
    }
    const unit = e == 0x75 && i + 6 <= len ? readHex4(p + <usize>(i + 2)) : -1;
    if (unit < 0) {
      // Not a valid escape (the parser rejects these): keep the backslash, move on.
      store<u8>(o++, <u8>c);
      i++;
      continue;
    }
    i += 6;
    let cp = <u32>unit;
    if (cp >= 0xD800 && cp <= 0xDFFF) {
      // gjson: a surrogate swallows the next \uXXXX, whatever it is.
      const next = i + 6 <= len && load<u8>(p + <usize>i) == 0x5C && load<u8>(p + <usize>(i + 1)) == 0x75
        ? readHex4(p + <usize>(i + 2)) : -1;
      if (next >= 0) {
        i += 6;
        cp = cp <= 0xDBFF && next >= 0xDC00 && next <= 0xDFFF
          ? 0x10000 + ((cp - 0xD800) << 10) + (<u32>next - 0xDC00)
          : 0xFFFD;
      } else {
        cp = 0xFFFD;
      }
    }
    o += writeUtf8(o, cp);
  }
  return <i32>(o - o0);
}

/**
 * The JSON string body at `p` (`len` bytes) decoded straight to an AssemblyScript string when it
 * is all ASCII (escapes decoded as unescapeInto does, \u escapes to UTF-16); null at the first
 * byte >= 0x80, so the caller takes the UTF-8 path. One pass, one allocation: the /metrics text
 * Higress wraps in JSON (64 KiB, an escape every few bytes) is decoded this way.
 */
export function unescapeAsciiToString(p: usize, len: i32): string | null {
  const out = changetype<usize>(__new(<usize>len << 1, idof<String>()));
  let o = out;
  let i = 0;
  while (i < len) {
    while (i + 8 <= len) {
      const v = load<u64>(p + <usize>i);
      const x = v ^ BACKSLASHES;
      const hit = ((x - ONES) & ~x & HIGHS) | (v & HIGHS);
      // Widen the 8 bytes to 8 UTF-16 units (also when only the first k are kept below).
      store<u64>(o, widen4(<u32>v));
      store<u64>(o, widen4(<u32>(v >> 32)), 8);
      if (hit != 0) {
        const k = <i32>(ctz<u64>(hit) >> 3);
        o += <usize>k << 1;
        i += k;
        break;
      }
      o += 16;
      i += 8;
    }
    if (i >= len) break;
    const c = <u32>load<u8>(p + <usize>i);
    if (c >= 0x80) return null;
    if (c != 0x5C || i + 1 >= len) {
      store<u16>(o, <u16>c);
      o += 2;
      i++;
      continue;
    }
    const e = <u32>load<u8>(p + <usize>(i + 1));
    const unit = simpleEscape(e);
    if (unit >= 0) {
      store<u16>(o, <u16>unit);
      o += 2;
      i += 2;
      continue;
    }
    // \u escapes (and anything unusual) are rare here: decode this one escape through the UTF-8
    // path and copy its code point as UTF-16.
    const tmp = memory.data(8);
    const used = escapeLength(p, i, len);
    const n = unescapeInto(p + <usize>i, used, tmp);
    const cp = utf8CodePoint(tmp, n);
    if (cp < 0) return null;
    if (cp < 0x10000) {
      store<u16>(o, <u16>cp);
      o += 2;
    } else {
      store<u16>(o, <u16>(0xD800 | ((cp - 0x10000) >> 10)));
      store<u16>(o, <u16>(0xDC00 | ((cp - 0x10000) & 0x3FF)), 2);
      o += 4;
    }
    i += used;
  }
  return changetype<string>(__renew(out, o - out));
}

/**
 * The length of the string unescapeAsciiToString would return for the same bytes, without
 * building it, when they are ASCII with only one-character escapes (\n, \", ...: a prompt's
 * usual text); -1 otherwise (a byte >= 0x80 or a \u escape: the caller decodes).
 */
export function asciiUnescapedLength(p: usize, len: i32): i32 {
  let n = 0;
  let i = 0;
  while (i < len) {
    const k = plainRun(p, i, len, 0, true);
    n += k;
    i += k;
    if (i >= len) break;
    const c = <u32>load<u8>(p + <usize>i);
    if (c >= 0x80) return -1;
    if (c != 0x5C || i + 1 >= len) { n++; i++; continue; }
    if (simpleEscape(<u32>load<u8>(p + <usize>(i + 1))) < 0) return -1;
    n++;
    i += 2;
  }
  return n;
}

// Bytes b0..b3 of `x` as four u16 (little-endian), by spreading the bytes apart.
// @ts-ignore: decorator
@inline function widen4(x: u32): u64 {
  let t = <u64>x;
  t = (t | (t << 16)) & 0x0000FFFF0000FFFF;
  return (t | (t << 8)) & 0x00FF00FF00FF00FF;
}

// Length of the escape at p+i as unescapeInto consumes it: \uXXXX (6), a surrogate followed by
// another \uXXXX (12), an invalid one (1: the backslash alone).
export function escapeLength(p: usize, i: i32, len: i32): i32 {
  if (i + 6 > len || load<u8>(p + <usize>(i + 1)) != 0x75) return 1;
  const unit = readHex4(p + <usize>(i + 2));
  if (unit < 0) return 1;
  if (unit >= 0xD800 && unit <= 0xDFFF && i + 12 <= len && load<u8>(p + <usize>(i + 6)) == 0x5C &&
    load<u8>(p + <usize>(i + 7)) == 0x75 && readHex4(p + <usize>(i + 8)) >= 0) return 12;
  return 6;
}

// The code point of the n (1..4) UTF-8 bytes at `b` that unescapeInto wrote, or -1 for n == 0.
function utf8CodePoint(b: usize, n: i32): i32 {
  const b0 = <i32>load<u8>(b);
  if (n == 1) return b0;
  if (n == 2) return ((b0 & 0x1F) << 6) | (<i32>load<u8>(b, 1) & 0x3F);
  if (n == 3) return ((b0 & 0x0F) << 12) | ((<i32>load<u8>(b, 1) & 0x3F) << 6) | (<i32>load<u8>(b, 2) & 0x3F);
  if (n == 4) return ((b0 & 0x07) << 18) | ((<i32>load<u8>(b, 1) & 0x3F) << 12) | ((<i32>load<u8>(b, 2) & 0x3F) << 6) | (<i32>load<u8>(b, 3) & 0x3F);
  return -1;
}
