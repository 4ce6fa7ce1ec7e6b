// Seeded filler text: `n` pseudo-words drawn from a fixed synthetic vocabulary, so one word is
// one simulator token and two independently drawn texts share (almost) no prefix. The vocabulary
// is built from syllables (4-8 characters a word, about a real token's byte length), so byte-based
// prefix hashing in the plugin sees realistic sizes. Never fails.
import type { SeededRandom } from "../../host-test/sim/random.js";

const SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "do", "fe", "gi", "hu", "ja"];
const VOCABULARY: string[] = (() => {
  const words: string[] = [];
  for (const a of SYLLABLES) for (const b of SYLLABLES) for (const c of SYLLABLES) words.push(a + b + c);
  return words; // 4096 words of 6 characters
})();

export function randomWords(rng: SeededRandom, n: number): string {
  const words: string[] = new Array(n);
  for (let i = 0; i < n; i++) words[i] = VOCABULARY[rng.int(VOCABULARY.length)];
  return words.join(" ");
}

/** Seeded Fisher-Yates shuffle, in place. */
export function shuffle<T>(items: T[], rng: SeededRandom): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}
