// FNV-1a 64-bit: a cheap, stable, non-cryptographic hash for namespacing keys and sharding.
// Strings are hashed as their UTF-8 bytes (lone surrogates as U+FFFD) so the TypeScript host side
// computes the same value with TextEncoder. Never throws.
import { utf8Encode } from "./utf8";
import { u64ToHexLower } from "./hex";

export const FNV64_OFFSET_BASIS: u64 = 0xCBF29CE484222325;
export const FNV64_PRIME: u64 = 0x100000001B3;

/** Continues an FNV-1a 64 hash `h` over bytes [start, end) of `b` (end = -1 means b.length). */
export function fnv1a64Update(h: u64, b: Uint8Array, start: i32 = 0, end: i32 = -1): u64 {
  const len = b.length;
  if (end < 0 || end > len) end = len;
  if (start < 0) start = 0;
  const p = b.dataStart;
  for (let i = start; i < end; i++) {
    h = (h ^ <u64>load<u8>(p + <usize>i)) * FNV64_PRIME;
  }
  return h;
}

/** FNV-1a 64 of the bytes of `b`. */
export function fnv1a64Bytes(b: Uint8Array): u64 {
  return fnv1a64Update(FNV64_OFFSET_BASIS, b);
}

/** FNV-1a 64 of the UTF-8 bytes of `s`. */
export function fnv1a64(s: string): u64 {
  return fnv1a64Bytes(utf8Encode(s));
}

/** fnv1a64(s) as 16 lowercase hex characters, zero-padded. */
export function fnv1a64Hex(s: string): string {
  return u64ToHexLower(fnv1a64(s));
}

// FNV-1a 32 (Go's hash/fnv New32a): Higress's cluster_hash slot index and endpoint_hash key suffix.
export const FNV32_OFFSET_BASIS: u32 = 0x811C9DC5;
export const FNV32_PRIME: u32 = 0x01000193;

/** FNV-1a 32 of the bytes of `b`. */
export function fnv1a32Bytes(b: Uint8Array): u32 {
  let h = FNV32_OFFSET_BASIS;
  const p = b.dataStart;
  for (let i = 0; i < b.length; i++) h = (h ^ <u32>load<u8>(p + <usize>i)) * FNV32_PRIME;
  return h;
}

/** Go's fmt.Sprintf("%08x", fnv32a(b)): 8 lowercase hex digits, zero-padded. */
export function fnv1a32Hex(b: Uint8Array): string {
  return u64ToHexLower(<u64>fnv1a32Bytes(b)).substring(8);
}
