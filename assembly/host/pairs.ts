// Proxy-Wasm pair-map wire format (proxy-wasm spec ABI v0.2.1, "header map" serialization):
//   u32 N, then N x (u32 key_len, u32 value_len), then for each pair: key bytes, 0, value bytes, 0.
// Used for header maps, local-response headers, http-call headers and Higress's
// proxy_get_upstream_hosts result. Pure: no host calls. Malformed input yields what could be read.

export class Pair {
  constructor(public key: string, public value: string) {}
}

export function serializePairs(pairs: Pair[]): ArrayBuffer {
  const keys = new Array<ArrayBuffer>(pairs.length);
  const values = new Array<ArrayBuffer>(pairs.length);
  let size = 4;
  for (let i = 0; i < pairs.length; i++) {
    keys[i] = String.UTF8.encode(pairs[i].key);
    values[i] = String.UTF8.encode(pairs[i].value);
    size += 8 + keys[i].byteLength + 1 + values[i].byteLength + 1;
  }
  const out = new ArrayBuffer(size);
  const base = changetype<usize>(out);
  store<u32>(base, pairs.length);
  let lens = base + 4;
  let data = base + 4 + 8 * pairs.length;
  for (let i = 0; i < pairs.length; i++) {
    const k = keys[i];
    const v = values[i];
    store<u32>(lens, k.byteLength);
    store<u32>(lens + 4, v.byteLength);
    lens += 8;
    memory.copy(data, changetype<usize>(k), k.byteLength);
    data += k.byteLength;
    store<u8>(data, 0);
    data += 1;
    memory.copy(data, changetype<usize>(v), v.byteLength);
    data += v.byteLength;
    store<u8>(data, 0);
    data += 1;
  }
  return out;
}

/** Parses a pair map; stops at the first inconsistency (never reads past the buffer). */
export function deserializePairs(buf: ArrayBuffer): Pair[] {
  const result = new Array<Pair>();
  const size = <usize>buf.byteLength;
  if (size < 4) return result;
  const base = changetype<usize>(buf);
  const n = <usize>load<u32>(base);
  if (n > (size - 4) / 8) return result;
  let lens = base + 4;
  let data = base + 4 + 8 * n;
  const end = base + size;
  for (let i: usize = 0; i < n; i++) {
    const klen = <usize>load<u32>(lens);
    const vlen = <usize>load<u32>(lens + 4);
    lens += 8;
    // In u64: two lengths near 2^32 (a malformed buffer) must not wrap their sum below the space left.
    if (<u64>klen + <u64>vlen + 2 > <u64>(end - data)) break;
    const key = String.UTF8.decodeUnsafe(data, klen);
    data += klen + 1;
    const value = String.UTF8.decodeUnsafe(data, vlen);
    data += vlen + 1;
    result.push(new Pair(key, value));
  }
  return result;
}
