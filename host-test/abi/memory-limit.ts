// Envoy's Wasm memory limit: proxy-wasm-cpp-host caps every VM's linear memory at 1 GiB
// (include/proxy-wasm/limits.h PROXY_WASM_HOST_MAX_WASM_MEMORY_SIZE_BYTES; V8 gets it as
// wasm_max_mem_pages in src/v8/v8.cc, wasmtime as its store limiter), so a `memory.grow` past it
// fails and an AssemblyScript guest aborts (a trap: the VM is failed). Node has no such cap, so
// the module's memory section is given that maximum before it is compiled: the same grow fails
// here at the same size.
// Failure behaviour: a module that does not parse as sections is returned unchanged (compiling it
// reports the error).

/** 1 GiB in 64 KiB pages. */
export const ENVOY_MAX_MEMORY_PAGES = (1024 * 1024 * 1024) / (64 * 1024);

function readLeb(b: Uint8Array<ArrayBuffer>, at: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  let i = at;
  for (;;) {
    if (i >= b.length) throw new Error("LEB128 past the end");
    const byte = b[i++];
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return { value, next: i };
    shift += 7;
    if (shift > 35) throw new Error("LEB128 too long");
  }
}

function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return out;
}

/** `wasm` with every memory it defines limited to `maxPages` (its own maximum when lower): the
 *  memory section (id 5) rewritten, every other byte as it was. */
export function capMemory(wasm: Uint8Array<ArrayBuffer>, maxPages = ENVOY_MAX_MEMORY_PAGES): Uint8Array<ArrayBuffer> {
  if (wasm.length < 8 || wasm[0] !== 0x00 || wasm[1] !== 0x61 || wasm[2] !== 0x73 || wasm[3] !== 0x6d) return wasm;
  try {
    for (let i = 8; i < wasm.length;) {
      const size = readLeb(wasm, i + 1);
      const end = size.next + size.value;
      if (end > wasm.length) return wasm;
      if (wasm[i] === 5) {
        const payload = cappedMemories(wasm, size.next, end, maxPages);
        if (payload === null) return wasm;
        const section = Uint8Array.from([5, ...leb(payload.length), ...payload]);
        const out = new Uint8Array(i + section.length + wasm.length - end);
        out.set(wasm.subarray(0, i));
        out.set(section, i);
        out.set(wasm.subarray(end), i + section.length);
        return out;
      }
      i = end;
    }
    return wasm;
  } catch {
    return wasm;
  }
}

/** The memory section's payload (bytes start..end of `wasm`) with each memory's maximum at most
 *  `maxPages`; null when it is not what a proxy-wasm module has (memory64, trailing bytes). */
function cappedMemories(wasm: Uint8Array<ArrayBuffer>, start: number, end: number, maxPages: number): number[] | null {
  const count = readLeb(wasm, start);
  const payload: number[] = leb(count.value);
  let p = count.next;
  for (let m = 0; m < count.value; m++) {
    const flags = wasm[p++];
    if (flags & 0x04) return null; // memory64
    const min = readLeb(wasm, p);
    p = min.next;
    let max = maxPages;
    if (flags & 0x01) {
      const own = readLeb(wasm, p);
      p = own.next;
      max = Math.min(max, own.value);
    }
    payload.push(flags | 0x01, ...leb(min.value), ...leb(max));
  }
  return p === end ? payload : null;
}
