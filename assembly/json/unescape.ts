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

const ONES: u64 = 0x0101010101010101;
const HIGHS: u64 = 0x8080808080808080;
const BACKSLASHES: u64 = 0x5C5C5C5C5C5C5C5C;

/** Decodes `len` bytes of escaped string body at `p` into `o` (room for `len` bytes); returns the
 *  decoded length. */
export function unescapeInto(p: usize, len: i32, o0: usize): i32 {
  let o = o0;
  let i = 0;
  while (i < len) {
    // Copy 8 bytes at a time while none of them is a backslash.
    while (i + 8 <= len) {
      const v = load<u64>(p + <usize>i);
      const x = v ^ BACKSLASHES;
      if (((x - ONES) & ~x & HIGHS) != 0) break;
      store<u64>(o, v);
      o += 8;
      i += 8;
    }
    if (i >= len) break;
    const c = <u32>load<u8>(p + <usize>i);
    if (c != 0x5C || i + 1 >= len) {
      store<u8>(o++, <u8>c);
      i++;
      continue;
    }
    const e = <u32>load<u8>(p + <usize>(i + 1));
    let simple: i32 = -1;
    switch (e) {
      case 0x22: simple = 0x22; break; // \"
      case 0x5C: simple = 0x5C; break; // \\
      case 0x2F: simple = 0x2F; break; // \/
      case 0x62: simple = 0x08; break; // \b
      case 0x66: simple = 0x0C; break; // \f
      case 0x6E: simple = 0x0A; break; // \n
      case 0x72: simple = 0x0D; break; // \r
      case 0x74: simple = 0x09; break; // \t
    }
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
