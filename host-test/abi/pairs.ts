// Proxy-Wasm pair-map serialization (spec v0.2.1 "Serialized maps"; higress-abi.md "Upstream host
// selection"): u32 N, then N x (u32 key_len, u32 value_len), then `key\0value\0` per pair, all
// little-endian. Shared by the host and by the tests' golden fixture.
// Failure behaviour: decodePairs returns [] for a truncated/garbled buffer, like
// proxy-wasm-cpp-host's toPairs (it returns an empty map rather than failing the call).

export type Pair = [string, string];
export type PairInput = ReadonlyArray<readonly [string | Uint8Array, string | Uint8Array]>;

const asBytes = (v: string | Uint8Array): Buffer => (typeof v === "string" ? Buffer.from(v, "utf8") : Buffer.from(v));

export function encodePairs(pairs: PairInput): Buffer {
  if (pairs.length === 0) return Buffer.alloc(0);
  const encoded = pairs.map(([k, v]) => [asBytes(k), asBytes(v)] as const);
  let size = 4 + 8 * encoded.length;
  for (const [k, v] of encoded) size += k.length + 1 + v.length + 1;
  const out = Buffer.alloc(size);
  out.writeUInt32LE(encoded.length, 0);
  let off = 4;
  for (const [k, v] of encoded) {
    out.writeUInt32LE(k.length, off);
    out.writeUInt32LE(v.length, off + 4);
    off += 8;
  }
  for (const [k, v] of encoded) {
    k.copy(out, off); off += k.length; out[off++] = 0;
    v.copy(out, off); off += v.length; out[off++] = 0;
  }
  return out;
}

/** cpp-host include/proxy-wasm/limits.h: PROXY_WASM_HOST_PAIRS_MAX_BYTES, PROXY_WASM_HOST_PAIRS_MAX_COUNT. */
export const PAIRS_MAX_BYTES = 1024 * 1024;
export const PAIRS_MAX_COUNT = 1024;

/**
 * As cpp-host PairsUtil::toPairs (src/pairs_util.cc): no pairs at all for a buffer over 1 MiB, over
 * 1,024 pairs, a name or value not followed by its NUL, or bytes left after the last one.
 */
export function decodePairs(bytes: Uint8Array): Pair[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 4 || buf.length > PAIRS_MAX_BYTES) return [];
  const n = buf.readUInt32LE(0);
  if (n > PAIRS_MAX_COUNT || 4 + n * 8 > buf.length) return [];
  const sizes: Array<[number, number]> = [];
  for (let i = 0; i < n; i++) sizes.push([buf.readUInt32LE(4 + i * 8), buf.readUInt32LE(8 + i * 8)]);
  let off = 4 + n * 8;
  const out: Pair[] = [];
  for (const [kl, vl] of sizes) {
    if (off + kl + 1 > buf.length || buf[off + kl] !== 0) return [];
    const k = buf.toString("utf8", off, off + kl); off += kl + 1;
    if (off + vl + 1 > buf.length || buf[off + vl] !== 0) return [];
    const v = buf.toString("utf8", off, off + vl); off += vl + 1;
    out.push([k, v]);
  }
  return off === buf.length ? out : [];
}
