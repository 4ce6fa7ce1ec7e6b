// 53-bit hashes (cyrb53 mixing) for KV block hashes and per-prompt seeds.
// 53 bits keep collisions negligible for the ~500k blocks a 16-pod fleet can hold (a 32-bit hash
// would collide within tens of thousands), and fit a JS number, so Map keys stay cheap.
// hashTokens streams over a token range without joining strings (prefix hashing is the
// simulator's hottest path). Never fails.

const TWO_POW_32 = 4294967296;

function finish(h1: number, h2: number): number {
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return TWO_POW_32 * (2097151 & h2) + (h1 >>> 0);
}

export function hash53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  return finish(h1, h2);
}

/** Hash of tokens[start..end) chained on a previous 53-bit hash (0 for none). */
export function hashTokens(tokens: readonly string[], start: number, end: number, parent = 0): number {
  let h1 = 0xdeadbeef ^ (parent % TWO_POW_32);
  let h2 = 0x41c6ce57 ^ Math.floor(parent / TWO_POW_32);
  for (let t = start; t < end; t++) {
    const token = tokens[t];
    for (let i = 0; i < token.length; i++) {
      const ch = token.charCodeAt(i);
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    // Token separator (a code unit no token contains, words are split on whitespace).
    h1 = Math.imul(h1 ^ 0x20, 2654435761);
    h2 = Math.imul(h2 ^ 0x20, 1597334677);
  }
  return finish(h1, h2);
}
