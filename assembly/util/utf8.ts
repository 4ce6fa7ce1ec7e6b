// UTF-8 <-> AssemblyScript string (UTF-16), never throwing.
// Encoding replaces lone surrogates with U+FFFD (as TextEncoder and Go do), so a string hashes to
// the same bytes here and on the TypeScript host side. Decoding is lossy in the WHATWG way:
// each maximal invalid subsequence becomes one U+FFFD (same output as Node's TextDecoder),
// because request bodies may carry invalid UTF-8 and must not abort the VM.

/** UTF-8 bytes of `s`; lone surrogates become EF BF BD. */
export function utf8Encode(s: string): Uint8Array {
  return Uint8Array.wrap(String.UTF8.encode(s, false, String.UTF8.ErrorMode.REPLACE));
}

/** Number of UTF-8 bytes `utf8Encode(s)` would produce. */
export function utf8Length(s: string): i32 {
  return String.UTF8.byteLength(s);
}

/** Decodes bytes [start, end) of `src` (clamped to the array) replacing invalid sequences by U+FFFD. */
export function utf8DecodeLossy(src: Uint8Array, start: i32 = 0, end: i32 = -1): string {
  const len = src.length;
  if (end < 0 || end > len) end = len;
  if (start < 0) start = 0;
  if (start >= end) return "";
  return utf8DecodeLossyAt(src.dataStart + <usize>start, end - start);
}

/** Same as utf8DecodeLossy over raw memory; `ptr` must point at `len` readable bytes. */
export function utf8DecodeLossyAt(ptr: usize, len: i32): string {
  // One UTF-16 unit per input byte is the worst case (ASCII, or FFFD per invalid byte).
  const out = changetype<usize>(__new(<usize>len << 1, idof<String>()));
  let o = out;
  let i = 0;
  while (i < len) {
    const b0 = <u32>load<u8>(ptr + <usize>i);
    if (b0 < 0x80) {
      store<u16>(o, <u16>b0); o += 2; i++;
      continue;
    }
    // Expected continuation count and the allowed range of the first continuation byte
    // (excludes overlongs, surrogates and code points above U+10FFFF).
    let need = 0;
    let lo: u32 = 0x80, hi: u32 = 0xBF;
    let cp: u32 = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) { need = 1; cp = b0 & 0x1F; }
    else if (b0 >= 0xE0 && b0 <= 0xEF) {
      need = 2; cp = b0 & 0x0F;
      if (b0 == 0xE0) lo = 0xA0; else if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      need = 3; cp = b0 & 0x07;
      if (b0 == 0xF0) lo = 0x90; else if (b0 == 0xF4) hi = 0x8F;
    } else {
      store<u16>(o, 0xFFFD); o += 2; i++;
      continue;
    }
    i++;
    let ok = true;
    for (let k = 0; k < need; k++) {
      if (i >= len) { ok = false; break; }
      const b = <u32>load<u8>(ptr + <usize>i);
      if (b < lo || b > hi) { ok = false; break; }
      lo = 0x80; hi = 0xBF;
      cp = (cp << 6) | (b & 0x3F);
      i++;
    }
    if (!ok) {
      // The offending byte is not consumed: it starts the next sequence (WHATWG "maximal subpart").
      store<u16>(o, 0xFFFD); o += 2;
      continue;
    }
    if (cp < 0x10000) {
      store<u16>(o, <u16>cp); o += 2;
    } else {
      cp -= 0x10000;
      store<u16>(o, <u16>(0xD800 | (cp >> 10)));
      store<u16>(o, <u16>(0xDC00 | (cp & 0x3FF)), 2);
      o += 4;
    }
  }
  return changetype<string>(__renew(out, o - out));
}
