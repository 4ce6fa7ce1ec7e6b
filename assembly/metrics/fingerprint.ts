// Change detector for metrics bodies: lets the plugin skip re-parsing a body it has already seen.
// Input: the body's UTF-8 bytes (or a string, encoded). Output: a 64-bit hash of ALL of it
// (length included).
// Why the whole body: sampling only the first/last bytes misses the change that matters, e.g.
// `vllm:num_requests_running 12` -> `13` in the middle of an otherwise identical body. Hashing
// eight bytes per step costs a fraction of a parse, and a miss only costs one re-parse.
// Failure behaviour: none; any string (also empty) hashes.

import { utf8Encode } from "../util/utf8";

const MULTIPLIER_A: u64 = 0x9E3779B97F4A7C15;
const MULTIPLIER_B: u64 = 0xC2B2AE3D27D4EB4F;

// @ts-ignore: decorator
@inline function mixWord(hash: u64, word: u64): u64 {
  return rotl<u64>((hash ^ word) * MULTIPLIER_A, 29) * MULTIPLIER_B;
}

/** Fingerprint of the full text; equal texts give equal values, any edit almost surely changes it. */
export function metricsFingerprint(text: string): u64 {
  return metricsFingerprintIn(utf8Encode(text));
}

/** metricsFingerprint of UTF-8 bytes (what the plugin holds). */
export function metricsFingerprintIn(body: Uint8Array): u64 {
  const base = body.dataStart;
  const bytes = <usize>body.length;
  let hash: u64 = MULTIPLIER_B ^ <u64>bytes;
  let offset: usize = 0;
  while (offset + 8 <= bytes) {
    hash = mixWord(hash, load<u64>(base + offset));
    offset += 8;
  }
  // Zero to seven bytes remain; fold them into one word with a marker for their count.
  let tail: u64 = 0;
  let shift: u64 = 0;
  while (offset < bytes) {
    tail |= <u64>load<u8>(base + offset) << shift;
    shift += 8;
    offset += 1;
  }
  hash = mixWord(hash, tail ^ (shift << 56));
  // Final avalanche (splitmix64) so that nearby inputs spread over all bits.
  hash ^= hash >> 30;
  hash *= 0xBF58476D1CE4E5B9;
  hash ^= hash >> 27;
  hash *= 0x94D049BB133111EB;
  hash ^= hash >> 31;
  return hash;
}
