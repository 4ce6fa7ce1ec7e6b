// Access to one guest's linear memory, plus allocation inside the guest through its allocator
// export (`malloc`, else `proxy_on_memory_allocate`), as proxy-wasm-cpp-host's allocMemory does.
// Failure behaviour: out-of-bounds reads/writes return null/false so the calling import can
// answer InvalidMemoryAccess (spec v0.2.1) instead of trapping the host.

export class GuestMemory {
  constructor(
    private readonly memory: () => WebAssembly.Memory,
    private readonly allocator: (size: number) => number,
  ) {}

  private view(): Uint8Array { return new Uint8Array(this.memory().buffer); }

  private inBounds(ptr: number, len: number): boolean {
    return ptr >= 0 && len >= 0 && ptr + len <= this.memory().buffer.byteLength;
  }

  /** A copy of guest bytes [ptr, ptr+len), or null when out of bounds. */
  read(ptr: number, len: number): Buffer | null {
    ptr >>>= 0; len >>>= 0;
    if (!this.inBounds(ptr, len)) return null;
    return Buffer.from(this.view().slice(ptr, ptr + len));
  }

  readString(ptr: number, len: number): string | null {
    const b = this.read(ptr, len);
    return b === null ? null : b.toString("utf8");
  }

  write(ptr: number, bytes: Uint8Array): boolean {
    ptr >>>= 0;
    if (!this.inBounds(ptr, bytes.length)) return false;
    this.view().set(bytes, ptr);
    return true;
  }

  writeU32(ptr: number, value: number): boolean {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(value >>> 0, 0);
    return this.write(ptr, b);
  }

  writeU64(ptr: number, value: bigint): boolean {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt.asUintN(64, value), 0);
    return this.write(ptr, b);
  }

  readU32(ptr: number): number | null {
    const b = this.read(ptr, 4);
    return b === null ? null : b.readUInt32LE(0);
  }

  /**
   * Copies `bytes` into a fresh guest allocation and writes (ptr, len) to the out-params.
   * An empty value writes (0, 0) and allocates nothing (cpp-host copyToPointerSize).
   */
  copyOut(bytes: Uint8Array, ptrPtr: number, sizePtr: number): boolean {
    if (bytes.length === 0) return this.writeU32(ptrPtr, 0) && this.writeU32(sizePtr, 0);
    const ptr = this.allocator(bytes.length) >>> 0;
    if (ptr === 0 || !this.write(ptr, bytes)) return false;
    return this.writeU32(ptrPtr, ptr) && this.writeU32(sizePtr, bytes.length);
  }
}
