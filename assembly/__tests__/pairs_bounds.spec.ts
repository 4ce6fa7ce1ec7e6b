// Length-prefixed pairs from the host (proxy-wasm's map encoding: n, then n key / value lengths, then
// the bytes, each NUL-terminated): two lengths whose sum wraps the integer type once passed the
// bounds check and read far past the buffer. A malformed buffer yields the pairs before it.
import { deserializePairs } from "../host/pairs";
import { parseUpstreamHosts } from "../services/candidates/upstream_hosts";

function buffer(n: u32, lens: u32[], bytes: string): ArrayBuffer {
  const b = new ArrayBuffer(4 + 4 * lens.length + bytes.length);
  store<u32>(changetype<usize>(b), n);
  for (let i = 0; i < lens.length; i++) store<u32>(changetype<usize>(b) + 4 + 4 * <usize>i, lens[i]);
  const text = String.UTF8.encode(bytes);
  memory.copy(changetype<usize>(b) + 4 + 4 * <usize>lens.length, changetype<usize>(text), <usize>text.byteLength);
  return b;
}

describe("host pair buffers with lengths that wrap", () => {
  it("deserializePairs stops at lengths whose sum wraps u32", () => {
    expect(deserializePairs(buffer(1, [0xffffffff, 1], "ab\0cd\0")).length).toBe(0);
    expect(deserializePairs(buffer(1, [2, 2], "ab\0cd\0")).length).toBe(1);
  });
  it("parseUpstreamHosts stops at lengths whose sum wraps i32", () => {
    expect(parseUpstreamHosts(buffer(1, [0x7ffffff0, 0x7ffffff0], "ab\0cd\0")).hosts.length).toBe(0);
    expect(parseUpstreamHosts(buffer(1, [2, 2], "ab\0cd\0")).hosts.length).toBe(1);
  });
});
