// SHA-1 (FIPS 180-4), one-shot and incremental. prefix_cache hashes every message block with it
// (Higress keys are uppercase hex SHA-1), so bodies of 100+ KB pass through here per request:
// whole 64-byte blocks are compressed straight from the caller's buffer with the state and the
// schedule in locals, and nothing is allocated per block. Never throws; out-of-range slice bounds
// are clamped.
import { bytesToHexUpper } from "./hex";

export class Sha1 {
  private h0: u32 = 0x67452301;
  private h1: u32 = 0xEFCDAB89;
  private h2: u32 = 0x98BADCFE;
  private h3: u32 = 0x10325476;
  private h4: u32 = 0xC3D2E1F0;
  // Bytes of a partial block waiting for more input.
  private pending: Uint8Array = new Uint8Array(64);
  private pendingLen: i32 = 0;
  private totalBytes: u64 = 0;

  /** Back to the initial state (digest() does this itself). */
  reset(): void {
    this.h0 = 0x67452301;
    this.h1 = 0xEFCDAB89;
    this.h2 = 0x98BADCFE;
    this.h3 = 0x10325476;
    this.h4 = 0xC3D2E1F0;
    this.pendingLen = 0;
    this.totalBytes = 0;
  }

  /** Feeds bytes [start, end) of `data`; end = -1 means data.length. */
  update(data: Uint8Array, start: i32 = 0, end: i32 = -1): void {
    const len = data.length;
    if (end < 0 || end > len) end = len;
    if (start < 0) start = 0;
    if (start >= end) return;
    this.updateRaw(data.dataStart + <usize>start, end - start);
  }

  /** Feeds `len` bytes of memory at `ptr` (for callers holding raw host buffers). */
  updateRaw(ptr: usize, len: i32): void {
    if (len <= 0) return;
    this.totalBytes += <u64>len;
    let p = ptr;
    let left = len;
    if (this.pendingLen > 0) {
      const take = min(64 - this.pendingLen, left);
      memory.copy(this.pending.dataStart + <usize>this.pendingLen, p, <usize>take);
      this.pendingLen += take;
      p += <usize>take;
      left -= take;
      if (this.pendingLen < 64) return;
      this.compress(this.pending.dataStart, 1);
      this.pendingLen = 0;
    }
    if (left >= 64) {
      const blocks = left >> 6;
      this.compress(p, blocks);
      p += <usize>blocks << 6;
      left &= 63;
    }
    if (left > 0) {
      memory.copy(this.pending.dataStart, p, <usize>left);
      this.pendingLen = left;
    }
  }

  /** Finishes the hash, returns the 20-byte digest and resets the state for reuse. */
  digest(): Uint8Array {
    this.finish();
    const out = new Uint8Array(20);
    const o = out.dataStart;
    store<u32>(o, bswap<u32>(this.h0));
    store<u32>(o + 4, bswap<u32>(this.h1));
    store<u32>(o + 8, bswap<u32>(this.h2));
    store<u32>(o + 12, bswap<u32>(this.h3));
    store<u32>(o + 16, bswap<u32>(this.h4));
    this.reset();
    return out;
  }

  /** Finishes the hash, XORs the 20-byte digest into acc[0..20) (no allocation) and resets. */
  digestXorInto(acc: Uint8Array): void {
    if (acc.length < 20) return;
    this.finish();
    const o = acc.dataStart;
    store<u32>(o, load<u32>(o) ^ bswap<u32>(this.h0));
    store<u32>(o + 4, load<u32>(o + 4) ^ bswap<u32>(this.h1));
    store<u32>(o + 8, load<u32>(o + 8) ^ bswap<u32>(this.h2));
    store<u32>(o + 12, load<u32>(o + 12) ^ bswap<u32>(this.h3));
    store<u32>(o + 16, load<u32>(o + 16) ^ bswap<u32>(this.h4));
    this.reset();
  }

  // Padding and length block: h0..h4 then hold the digest.
  private finish(): void {
    const bitLen = this.totalBytes << 3;
    const buf = this.pending.dataStart;
    let n = this.pendingLen;
    store<u8>(buf + <usize>n, 0x80);
    n++;
    if (n > 56) {
      memory.fill(buf + <usize>n, 0, <usize>(64 - n));
      this.compress(buf, 1);
      n = 0;
    }
    memory.fill(buf + <usize>n, 0, <usize>(56 - n));
    store<u64>(buf + 56, bswap<u64>(bitLen));
    this.compress(buf, 1);
  }

  // Compresses `count` 64-byte blocks starting at `ptr`. Fully unrolled (generated: 80 rounds with
  // the five working variables renamed instead of shifted, the schedule in 16 locals), which keeps
  // everything in registers: about 3x the speed of the rolled loop over a memory schedule.
  private compress(ptr: usize, count: i32): void {
    let h0 = this.h0, h1 = this.h1, h2 = this.h2, h3 = this.h3, h4 = this.h4;
    for (let k = 0; k < count; k++) {
      const block = ptr + (<usize>k << 6);
      let w0 = bswap<u32>(load<u32>(block, 0));
      let w1 = bswap<u32>(load<u32>(block, 4));
      let w2 = bswap<u32>(load<u32>(block, 8));
      let w3 = bswap<u32>(load<u32>(block, 12));
      let w4 = bswap<u32>(load<u32>(block, 16));
      let w5 = bswap<u32>(load<u32>(block, 20));
      let w6 = bswap<u32>(load<u32>(block, 24));
      let w7 = bswap<u32>(load<u32>(block, 28));
      let w8 = bswap<u32>(load<u32>(block, 32));
      let w9 = bswap<u32>(load<u32>(block, 36));
      let w10 = bswap<u32>(load<u32>(block, 40));
      let w11 = bswap<u32>(load<u32>(block, 44));
      let w12 = bswap<u32>(load<u32>(block, 48));
      let w13 = bswap<u32>(load<u32>(block, 52));
      let w14 = bswap<u32>(load<u32>(block, 56));
      let w15 = bswap<u32>(load<u32>(block, 60));
      let a = h0, b = h1, c = h2, d = h3, e = h4;
      e += rotl<u32>(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + w0; b = rotl<u32>(b, 30);
      d += rotl<u32>(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + w1; a = rotl<u32>(a, 30);
      c += rotl<u32>(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + w2; e = rotl<u32>(e, 30);
      b += rotl<u32>(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + w3; d = rotl<u32>(d, 30);
      a += rotl<u32>(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + w4; c = rotl<u32>(c, 30);
      e += rotl<u32>(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + w5; b = rotl<u32>(b, 30);
      d += rotl<u32>(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + w6; a = rotl<u32>(a, 30);
      c += rotl<u32>(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + w7; e = rotl<u32>(e, 30);
      b += rotl<u32>(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + w8; d = rotl<u32>(d, 30);
      a += rotl<u32>(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + w9; c = rotl<u32>(c, 30);
      e += rotl<u32>(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + w10; b = rotl<u32>(b, 30);
      d += rotl<u32>(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + w11; a = rotl<u32>(a, 30);
      c += rotl<u32>(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + w12; e = rotl<u32>(e, 30);
      b += rotl<u32>(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + w13; d = rotl<u32>(d, 30);
      a += rotl<u32>(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + w14; c = rotl<u32>(c, 30);
      e += rotl<u32>(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + w15; b = rotl<u32>(b, 30);
      w0 = rotl<u32>(w13 ^ w8 ^ w2 ^ w0, 1);
      d += rotl<u32>(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + w0; a = rotl<u32>(a, 30);
      w1 = rotl<u32>(w14 ^ w9 ^ w3 ^ w1, 1);
      c += rotl<u32>(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + w1; e = rotl<u32>(e, 30);
      w2 = rotl<u32>(w15 ^ w10 ^ w4 ^ w2, 1);
      b += rotl<u32>(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + w2; d = rotl<u32>(d, 30);
      w3 = rotl<u32>(w0 ^ w11 ^ w5 ^ w3, 1);
      a += rotl<u32>(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + w3; c = rotl<u32>(c, 30);
      w4 = rotl<u32>(w1 ^ w12 ^ w6 ^ w4, 1);
      e += rotl<u32>(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + w4; b = rotl<u32>(b, 30);
      w5 = rotl<u32>(w2 ^ w13 ^ w7 ^ w5, 1);
      d += rotl<u32>(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + w5; a = rotl<u32>(a, 30);
      w6 = rotl<u32>(w3 ^ w14 ^ w8 ^ w6, 1);
      c += rotl<u32>(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + w6; e = rotl<u32>(e, 30);
      w7 = rotl<u32>(w4 ^ w15 ^ w9 ^ w7, 1);
      b += rotl<u32>(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + w7; d = rotl<u32>(d, 30);
      w8 = rotl<u32>(w5 ^ w0 ^ w10 ^ w8, 1);
      a += rotl<u32>(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + w8; c = rotl<u32>(c, 30);
      w9 = rotl<u32>(w6 ^ w1 ^ w11 ^ w9, 1);
      e += rotl<u32>(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + w9; b = rotl<u32>(b, 30);
      w10 = rotl<u32>(w7 ^ w2 ^ w12 ^ w10, 1);
      d += rotl<u32>(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + w10; a = rotl<u32>(a, 30);
      w11 = rotl<u32>(w8 ^ w3 ^ w13 ^ w11, 1);
      c += rotl<u32>(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + w11; e = rotl<u32>(e, 30);
      w12 = rotl<u32>(w9 ^ w4 ^ w14 ^ w12, 1);
      b += rotl<u32>(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + w12; d = rotl<u32>(d, 30);
      w13 = rotl<u32>(w10 ^ w5 ^ w15 ^ w13, 1);
      a += rotl<u32>(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + w13; c = rotl<u32>(c, 30);
      w14 = rotl<u32>(w11 ^ w6 ^ w0 ^ w14, 1);
      e += rotl<u32>(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + w14; b = rotl<u32>(b, 30);
      w15 = rotl<u32>(w12 ^ w7 ^ w1 ^ w15, 1);
      d += rotl<u32>(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + w15; a = rotl<u32>(a, 30);
      w0 = rotl<u32>(w13 ^ w8 ^ w2 ^ w0, 1);
      c += rotl<u32>(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + w0; e = rotl<u32>(e, 30);
      w1 = rotl<u32>(w14 ^ w9 ^ w3 ^ w1, 1);
      b += rotl<u32>(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + w1; d = rotl<u32>(d, 30);
      w2 = rotl<u32>(w15 ^ w10 ^ w4 ^ w2, 1);
      a += rotl<u32>(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + w2; c = rotl<u32>(c, 30);
      w3 = rotl<u32>(w0 ^ w11 ^ w5 ^ w3, 1);
      e += rotl<u32>(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + w3; b = rotl<u32>(b, 30);
      w4 = rotl<u32>(w1 ^ w12 ^ w6 ^ w4, 1);
      d += rotl<u32>(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + w4; a = rotl<u32>(a, 30);
      w5 = rotl<u32>(w2 ^ w13 ^ w7 ^ w5, 1);
      c += rotl<u32>(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + w5; e = rotl<u32>(e, 30);
      w6 = rotl<u32>(w3 ^ w14 ^ w8 ^ w6, 1);
      b += rotl<u32>(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + w6; d = rotl<u32>(d, 30);
      w7 = rotl<u32>(w4 ^ w15 ^ w9 ^ w7, 1);
      a += rotl<u32>(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + w7; c = rotl<u32>(c, 30);
      w8 = rotl<u32>(w5 ^ w0 ^ w10 ^ w8, 1);
      e += rotl<u32>(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + w8; b = rotl<u32>(b, 30);
      w9 = rotl<u32>(w6 ^ w1 ^ w11 ^ w9, 1);
      d += rotl<u32>(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + w9; a = rotl<u32>(a, 30);
      w10 = rotl<u32>(w7 ^ w2 ^ w12 ^ w10, 1);
      c += rotl<u32>(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + w10; e = rotl<u32>(e, 30);
      w11 = rotl<u32>(w8 ^ w3 ^ w13 ^ w11, 1);
      b += rotl<u32>(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + w11; d = rotl<u32>(d, 30);
      w12 = rotl<u32>(w9 ^ w4 ^ w14 ^ w12, 1);
      a += rotl<u32>(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + w12; c = rotl<u32>(c, 30);
      w13 = rotl<u32>(w10 ^ w5 ^ w15 ^ w13, 1);
      e += rotl<u32>(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + w13; b = rotl<u32>(b, 30);
      w14 = rotl<u32>(w11 ^ w6 ^ w0 ^ w14, 1);
      d += rotl<u32>(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + w14; a = rotl<u32>(a, 30);
      w15 = rotl<u32>(w12 ^ w7 ^ w1 ^ w15, 1);
      c += rotl<u32>(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + w15; e = rotl<u32>(e, 30);
      w0 = rotl<u32>(w13 ^ w8 ^ w2 ^ w0, 1);
      b += rotl<u32>(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + w0; d = rotl<u32>(d, 30);
      w1 = rotl<u32>(w14 ^ w9 ^ w3 ^ w1, 1);
      a += rotl<u32>(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + w1; c = rotl<u32>(c, 30);
      w2 = rotl<u32>(w15 ^ w10 ^ w4 ^ w2, 1);
      e += rotl<u32>(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + w2; b = rotl<u32>(b, 30);
      w3 = rotl<u32>(w0 ^ w11 ^ w5 ^ w3, 1);
      d += rotl<u32>(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + w3; a = rotl<u32>(a, 30);
      w4 = rotl<u32>(w1 ^ w12 ^ w6 ^ w4, 1);
      c += rotl<u32>(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + w4; e = rotl<u32>(e, 30);
      w5 = rotl<u32>(w2 ^ w13 ^ w7 ^ w5, 1);
      b += rotl<u32>(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + w5; d = rotl<u32>(d, 30);
      w6 = rotl<u32>(w3 ^ w14 ^ w8 ^ w6, 1);
      a += rotl<u32>(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + w6; c = rotl<u32>(c, 30);
      w7 = rotl<u32>(w4 ^ w15 ^ w9 ^ w7, 1);
      e += rotl<u32>(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + w7; b = rotl<u32>(b, 30);
      w8 = rotl<u32>(w5 ^ w0 ^ w10 ^ w8, 1);
      d += rotl<u32>(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + w8; a = rotl<u32>(a, 30);
      w9 = rotl<u32>(w6 ^ w1 ^ w11 ^ w9, 1);
      c += rotl<u32>(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + w9; e = rotl<u32>(e, 30);
      w10 = rotl<u32>(w7 ^ w2 ^ w12 ^ w10, 1);
      b += rotl<u32>(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + w10; d = rotl<u32>(d, 30);
      w11 = rotl<u32>(w8 ^ w3 ^ w13 ^ w11, 1);
      a += rotl<u32>(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + w11; c = rotl<u32>(c, 30);
      w12 = rotl<u32>(w9 ^ w4 ^ w14 ^ w12, 1);
      e += rotl<u32>(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + w12; b = rotl<u32>(b, 30);
      w13 = rotl<u32>(w10 ^ w5 ^ w15 ^ w13, 1);
      d += rotl<u32>(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + w13; a = rotl<u32>(a, 30);
      w14 = rotl<u32>(w11 ^ w6 ^ w0 ^ w14, 1);
      c += rotl<u32>(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + w14; e = rotl<u32>(e, 30);
      w15 = rotl<u32>(w12 ^ w7 ^ w1 ^ w15, 1);
      b += rotl<u32>(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + w15; d = rotl<u32>(d, 30);
      w0 = rotl<u32>(w13 ^ w8 ^ w2 ^ w0, 1);
      a += rotl<u32>(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + w0; c = rotl<u32>(c, 30);
      w1 = rotl<u32>(w14 ^ w9 ^ w3 ^ w1, 1);
      e += rotl<u32>(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + w1; b = rotl<u32>(b, 30);
      w2 = rotl<u32>(w15 ^ w10 ^ w4 ^ w2, 1);
      d += rotl<u32>(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + w2; a = rotl<u32>(a, 30);
      w3 = rotl<u32>(w0 ^ w11 ^ w5 ^ w3, 1);
      c += rotl<u32>(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + w3; e = rotl<u32>(e, 30);
      w4 = rotl<u32>(w1 ^ w12 ^ w6 ^ w4, 1);
      b += rotl<u32>(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + w4; d = rotl<u32>(d, 30);
      w5 = rotl<u32>(w2 ^ w13 ^ w7 ^ w5, 1);
      a += rotl<u32>(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + w5; c = rotl<u32>(c, 30);
      w6 = rotl<u32>(w3 ^ w14 ^ w8 ^ w6, 1);
      e += rotl<u32>(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + w6; b = rotl<u32>(b, 30);
      w7 = rotl<u32>(w4 ^ w15 ^ w9 ^ w7, 1);
      d += rotl<u32>(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + w7; a = rotl<u32>(a, 30);
      w8 = rotl<u32>(w5 ^ w0 ^ w10 ^ w8, 1);
      c += rotl<u32>(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + w8; e = rotl<u32>(e, 30);
      w9 = rotl<u32>(w6 ^ w1 ^ w11 ^ w9, 1);
      b += rotl<u32>(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + w9; d = rotl<u32>(d, 30);
      w10 = rotl<u32>(w7 ^ w2 ^ w12 ^ w10, 1);
      a += rotl<u32>(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + w10; c = rotl<u32>(c, 30);
      w11 = rotl<u32>(w8 ^ w3 ^ w13 ^ w11, 1);
      e += rotl<u32>(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + w11; b = rotl<u32>(b, 30);
      w12 = rotl<u32>(w9 ^ w4 ^ w14 ^ w12, 1);
      d += rotl<u32>(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + w12; a = rotl<u32>(a, 30);
      w13 = rotl<u32>(w10 ^ w5 ^ w15 ^ w13, 1);
      c += rotl<u32>(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + w13; e = rotl<u32>(e, 30);
      w14 = rotl<u32>(w11 ^ w6 ^ w0 ^ w14, 1);
      b += rotl<u32>(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + w14; d = rotl<u32>(d, 30);
      w15 = rotl<u32>(w12 ^ w7 ^ w1 ^ w15, 1);
      a += rotl<u32>(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + w15; c = rotl<u32>(c, 30);
      h0 += a; h1 += b; h2 += c; h3 += d; h4 += e;
  
    }
    this.h0 = h0;
    this.h1 = h1;
    this.h2 = h2;
    this.h3 = h3;
    this.h4 = h4;
  }
}

/** 20-byte SHA-1 digest of `data`. */
export function sha1(data: Uint8Array): Uint8Array {
  const h = new Sha1();
  h.update(data);
  return h.digest();
}

/** SHA-1 of `data` as 40 uppercase hex characters (the Higress prefix_cache block-hash format). */
export function sha1HexUpper(data: Uint8Array): string {
  return bytesToHexUpper(sha1(data));
}
