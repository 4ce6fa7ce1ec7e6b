// Character helpers shared by the metrics scanners: unchecked UTF-16 reads and ASCII classes.
// Callers must keep indices inside [0, length) of the string whose address is `base`.

/** UTF-16 unit at index `i` of the string at `base`, without a bounds check. */
// @ts-ignore: decorator
@inline export function codeAt(base: usize, i: i32): i32 {
  return <i32>load<u16>(base + (<usize>i << 1));
}

// @ts-ignore: decorator
@inline export function isDigit(c: i32): bool {
  return <u32>(c - 48) < 10;
}

/** ASCII letter; `c | 0x20` folds case and cannot turn a non-ASCII unit into a letter. */
// @ts-ignore: decorator
@inline export function isLetter(c: i32): bool {
  return <u32>((c | 0x20) - 97) < 26;
}

/** Separators inside a sample line (the format allows spaces and tabs). */
// @ts-ignore: decorator
@inline export function isBlank(c: i32): bool {
  return c == 32 || c == 9;
}
