// Character helpers shared by the metrics scanners: unchecked byte reads and ASCII classes.
// The scanners work on UTF-8 bytes; every character the format gives meaning to is ASCII, and a
// byte >= 0x80 (part of a UTF-8 sequence) is in none of these classes.
// Callers must keep indices inside [0, length) of the bytes at `base`.

/** Byte at index `i` of the bytes at `base`, without a bounds check. */
// @ts-ignore: decorator
@inline export function codeAt(base: usize, i: i32): i32 {
  return <i32>load<u8>(base + <usize>i);
}

// @ts-ignore: decorator
@inline export function isDigit(c: i32): bool {
  return <u32>(c - 48) < 10;
}

/** ASCII letter; `c | 0x20` folds case and cannot turn a non-ASCII byte into a letter. */
// @ts-ignore: decorator
@inline export function isLetter(c: i32): bool {
  return <u32>((c | 0x20) - 97) < 26;
}

/** Separators inside a sample line (the format allows spaces and tabs). */
// @ts-ignore: decorator
@inline export function isBlank(c: i32): bool {
  return c == 32 || c == 9;
}
