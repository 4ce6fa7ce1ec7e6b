// SHA-1 (FIPS 180-4), one-shot and incremental. prefix_cache hashes every message block with it
// (Higress keys are uppercase hex SHA-1), so bodies of 100+ KB pass through here per request:
// whole 64-byte blocks are compressed straight from the caller's buffer, the 80-word schedule is
// a reused array, and nothing is allocated per block. Never throws; out-of-range slice bounds
// are clamped.
import { bytesToHexUpper } from "./hex";

export class Sha1 {
  private h0: u32 = 0x67452301;
  private h1: u32 = 0xEFCDAB89;
  private h2: u32 = 0x98BADCFE;
  private h3: u32 = 0x10325476;
  private h4: u32 = 0xC3D2E1F0;
  private schedule: Uint32Array = new Uint32Array(80);
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
      this.compress(this.pending.dataStart);
      this.pendingLen = 0;
    }
    while (left >= 64) {
      this.compress(p);
      p += 64;
      left -= 64;
    }
    if (left > 0) {
      memory.copy(this.pending.dataStart, p, <usize>left);
      this.pendingLen = left;
    }
  }

  /** Finishes the hash, returns the 20-byte digest and resets the state for reuse. */
  digest(): Uint8Array {
    const bitLen = this.totalBytes << 3;
    const buf = this.pending.dataStart;
    let n = this.pendingLen;
    store<u8>(buf + <usize>n, 0x80);
    n++;
    if (n > 56) {
      memory.fill(buf + <usize>n, 0, <usize>(64 - n));
      this.compress(buf);
      n = 0;
    }
    memory.fill(buf + <usize>n, 0, <usize>(56 - n));
    store<u64>(buf + 56, bswap<u64>(bitLen));
    this.compress(buf);

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

  // One 64-byte block at `block`.
  private compress(block: usize): void {
    const w = this.schedule.dataStart;
    for (let t = 0; t < 16; t++) {
      store<u32>(w + (<usize>t << 2), bswap<u32>(load<u32>(block + (<usize>t << 2))));
    }
    for (let t = 16; t < 80; t++) {
      const x = load<u32>(w + (<usize>(t - 3) << 2)) ^ load<u32>(w + (<usize>(t - 8) << 2)) ^
        load<u32>(w + (<usize>(t - 14) << 2)) ^ load<u32>(w + (<usize>(t - 16) << 2));
      store<u32>(w + (<usize>t << 2), rotl<u32>(x, 1));
    }
    let a = this.h0, b = this.h1, c = this.h2, d = this.h3, e = this.h4;
    for (let t = 0; t < 20; t++) {
      const tmp = rotl<u32>(a, 5) + (d ^ (b & (c ^ d))) + e + 0x5A827999 + load<u32>(w + (<usize>t << 2));
      e = d; d = c; c = rotl<u32>(b, 30); b = a; a = tmp;
    }
    for (let t = 20; t < 40; t++) {
      const tmp = rotl<u32>(a, 5) + (b ^ c ^ d) + e + 0x6ED9EBA1 + load<u32>(w + (<usize>t << 2));
      e = d; d = c; c = rotl<u32>(b, 30); b = a; a = tmp;
    }
    for (let t = 40; t < 60; t++) {
      const tmp = rotl<u32>(a, 5) + ((b & c) | (d & (b | c))) + e + 0x8F1BBCDC + load<u32>(w + (<usize>t << 2));
      e = d; d = c; c = rotl<u32>(b, 30); b = a; a = tmp;
    }
    for (let t = 60; t < 80; t++) {
      const tmp = rotl<u32>(a, 5) + (b ^ c ^ d) + e + 0xCA62C1D6 + load<u32>(w + (<usize>t << 2));
      e = d; d = c; c = rotl<u32>(b, 30); b = a; a = tmp;
    }
    this.h0 += a;
    this.h1 += b;
    this.h2 += c;
    this.h3 += d;
    this.h4 += e;
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
