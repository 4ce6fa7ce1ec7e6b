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

/** `wasm` with every memory it defines limited to `maxPages` (its own maximum when lower). */
export function capMemory(wasm: Uint8Array<ArrayBuffer>, maxPages = ENVOY_MAX_MEMORY_PAGES): Uint8Array<ArrayBuffer> {
  if (wasm.length < 8 || wasm[0] !== 0x00 || wasm[1] !== 0x61 || wasm[2] !== 0x73 || wasm[3] !== 0x6d) return wasm;
  try {
    const out: number[] = Array.from(wasm.subarray(0, 8));
    let i = 8;
    while (i < wasm.length) {
      const id = wasm[i];
      const size = readLeb(wasm, i + 1);
      const start = size.next;
      const end = start + size.value;
      if (end > wasm.length) return wasm;
      if (id !== 5) {
        for (let j = i; j < end; j++) out.push(wasm[j]);
        i = end;
        continue;
      }
      const count = readLeb(wasm, start);
      const payload: number[] = leb(count.value);
      let p = count.next;
      for (let m = 0; m < count.value; m++) {
        const flags = wasm[p++];
        if (flags & 0x04) return wasm; // memory64: not a proxy-wasm module's
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
      if (p !== end) return wasm;
      out.push(5, ...leb(payload.length), ...payload);
      i = end;
    }
    return Uint8Array.from(out);
  } catch {
    return wasm;
  }
}
