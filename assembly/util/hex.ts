// Hex encoding/decoding and in-place XOR of byte arrays (prefix-cache level keys are hex XORs of
// SHA-1 digests). Never throws: bad hex input yields null.

// @ts-ignore: decorator
@inline function hexDigitUpper(n: u32): u16 {
  return <u16>(n < 10 ? 48 + n : 55 + n);
}

/** Uppercase hex of `b` (2 chars per byte). */
export function bytesToHexUpper(b: Uint8Array): string {
  return prefixedHexUpper("", b);
}

/** `prefix` followed by the uppercase hex of `b`, built as one string (one allocation). */
export function prefixedHexUpper(prefix: string, b: Uint8Array): string {
  const n = b.length;
  const pre = <usize>prefix.length << 1;
  const out = changetype<usize>(__new(pre + (<usize>n << 2), idof<String>()));
  memory.copy(out, changetype<usize>(prefix), pre);
  const dst = out + pre;
  const src = b.dataStart;
  for (let i = 0; i < n; i++) {
    const v = <u32>load<u8>(src + <usize>i);
    // Two UTF-16 units written as one u32: high nibble first (little-endian memory).
    store<u32>(dst + (<usize>i << 2), <u32>hexDigitUpper(v >> 4) | (<u32>hexDigitUpper(v & 15) << 16));
  }
  return changetype<string>(out);
}

/** Lowercase hex of the 8 bytes of `v`, most significant first (16 chars). */
export function u64ToHexLower(v: u64): string {
  const out = changetype<usize>(__new(32, idof<String>()));
  for (let i = 0; i < 16; i++) {
    const nib = <u32>((v >> (<u64>(60 - 4 * i))) & 15);
    store<u16>(out + (<usize>i << 1), <u16>(nib < 10 ? 48 + nib : 87 + nib));
  }
  return changetype<string>(out);
}

// Value of one hex digit (either case), or -1.
function hexValue(c: u32): i32 {
  if (c >= 48 && c <= 57) return <i32>(c - 48);
  if (c >= 65 && c <= 70) return <i32>(c - 55);
  if (c >= 97 && c <= 102) return <i32>(c - 87);
  return -1;
}

/** Bytes of a hex string (either case). Null on odd length or a non-hex character. */
export function hexToBytes(s: string): Uint8Array | null {
  const n = s.length;
  if (n & 1) return null;
  const out = new Uint8Array(n >> 1);
  for (let i = 0; i < n; i += 2) {
    const hi = hexValue(<u32>s.charCodeAt(i));
    const lo = hexValue(<u32>s.charCodeAt(i + 1));
    if (hi < 0 || lo < 0) return null;
    out[i >> 1] = <u8>((hi << 4) | lo);
  }
  return out;
}

/** acc[i] ^= b[i] over the common length; bytes of `acc` beyond `b` are left unchanged. */
export function xorInto(acc: Uint8Array, b: Uint8Array): void {
  const n = min(acc.length, b.length);
  const a = acc.dataStart;
  const c = b.dataStart;
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    store<u64>(a + <usize>i, load<u64>(a + <usize>i) ^ load<u64>(c + <usize>i));
  }
  for (; i < n; i++) {
    store<u8>(a + <usize>i, load<u8>(a + <usize>i) ^ load<u8>(c + <usize>i));
  }
}
