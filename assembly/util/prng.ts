// xorshift64* pseudo-random generator for tie-breaking and sampling. Math.random is not an
// option: it pulls in the `env.seed` host import, which Higress does not provide. Callers seed
// it (e.g. from the clock and the context id); a zero seed, which would stay zero forever, is
// replaced by a fixed odd constant. Never throws.

const ZERO_SEED_REPLACEMENT: u64 = 0x9E3779B97F4A7C15;
const XORSHIFT64STAR_MULTIPLIER: u64 = 0x2545F4914F6CDD1D;

export class Xorshift {
  private state: u64;

  constructor(seed: u64) {
    this.state = seed != 0 ? seed : ZERO_SEED_REPLACEMENT;
  }

  /** Next 64-bit output. */
  next(): u64 {
    let x = this.state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    this.state = x;
    return x * XORSHIFT64STAR_MULTIPLIER;
  }

  /** Uniform integer in [0, n); 0 when n is 0. Unbiased (Lemire's multiply-and-reject). */
  nextBelow(n: u32): u32 {
    if (n == 0) return 0;
    // The high 32 bits of xorshift64* are its best-quality bits.
    let m = <u64>(<u32>(this.next() >> 32)) * <u64>n;
    let low = <u32>m;
    if (low < n) {
      const threshold: u32 = (<u32>0 - n) % n; // 2^32 mod n
      while (low < threshold) {
        m = <u64>(<u32>(this.next() >> 32)) * <u64>n;
        low = <u32>m;
      }
    }
    return <u32>(m >> 32);
  }

  /** Uniform float in [0, 1) with 53 random bits. */
  nextFloat(): f64 {
    return <f64>(this.next() >> 11) * 1.1102230246251565e-16; // 2^-53
  }
}
