// Character helpers shared by the metrics scanners: unchecked byte reads and the separators of a
// sample line (digits, letters and name characters: util/ascii.ts). The scanners work on UTF-8
// bytes; every character the format gives meaning to is ASCII.
// Callers must keep indices inside [0, length) of the bytes at `base`.

/** Byte at index `i` of the bytes at `base`, without a bounds check. */
// @ts-ignore: decorator
@inline export function codeAt(base: usize, i: i32): i32 {
  return <i32>load<u8>(base + <usize>i);
}

/** Separators inside a sample line (the format allows spaces and tabs). */
// @ts-ignore: decorator
@inline export function isBlank(c: i32): bool {
  return c == 32 || c == 9;
}
