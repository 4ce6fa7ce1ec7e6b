// xorshift64*: reference outputs (computed in Node with BigInt from the published recurrence),
// seed handling, and range/uniformity properties of nextBelow/nextFloat.
import { Xorshift } from "../util/prng";

describe("Xorshift", () => {
  it("matches reference xorshift64* outputs", () => {
    const r = new Xorshift(1);
    expect(r.next()).toBe(0x47E4CE4B896CDD1D);
    expect(r.next()).toBe(0xABCFA6A8E079651D);
    expect(r.next()).toBe(0xB9D10D8FEB731F57);
    expect(r.next()).toBe(0x4DB418A0BB1B019D);
    const s = new Xorshift(0x0123456789ABCDEF);
    expect(s.next()).toBe(0x7C9482472CB6708C);
    expect(s.next()).toBe(0xD5705692BF1F28DE);
    expect(s.next()).toBe(0x88B71E3BA5E005C0);
  });
  it("seed 0 is replaced, so the stream is not stuck at zero", () => {
    const r = new Xorshift(0);
    expect(r.next()).toBe(0x0D83B3E29A21487A);
    expect(r.next()).toBe(0x54C44C79F1FE9D67);
  });
  it("same seed gives the same stream, different seeds differ", () => {
    const a = new Xorshift(42), b = new Xorshift(42), c = new Xorshift(43);
    let differs = false;
    for (let i = 0; i < 100; i++) {
      const x = a.next();
      expect(x).toBe(b.next());
      if (x != c.next()) differs = true;
    }
    expect(differs).toBe(true);
  });
  it("nextBelow stays in range, hits every value, and is roughly uniform", () => {
    const r = new Xorshift(7);
    const n: u32 = 10;
    const counts = new Array<i32>(n).fill(0);
    const draws = 100000;
    // One expect per property, not per draw: as-pect's expect is slow in bulk.
    let outOfRange = 0;
    for (let i = 0; i < draws; i++) {
      const v = r.nextBelow(n);
      if (v >= n) { outOfRange++; continue; }
      counts[v]++;
    }
    expect(outOfRange).toBe(0);
    // Chi-square with 9 degrees of freedom; 30 is far beyond the 0.999 quantile (27.9).
    let chi2: f64 = 0;
    const expected = <f64>draws / <f64>n;
    for (let k: u32 = 0; k < n; k++) {
      expect(counts[k]).toBeGreaterThan(0);
      const d = <f64>counts[k] - expected;
      chi2 += d * d / expected;
    }
    expect(chi2).toBeLessThan(30.0);
  });
  it("nextBelow edge cases: 0 and 1 give 0; large n stays in range", () => {
    const r = new Xorshift(9);
    expect(r.nextBelow(0)).toBe(0);
    expect(r.nextBelow(1)).toBe(0);
    const big: u32 = 0xFFFFFFFB;
    // n = 3 * 2^30 has a large rejection zone (2^30 values); results must still be in range
    const wide: u32 = 0xC0000000;
    let outOfRange = 0;
    let aboveHalf = 0;
    for (let i = 0; i < 1000; i++) {
      if (r.nextBelow(big) >= big) outOfRange++;
      const v = r.nextBelow(wide);
      if (v >= wide) outOfRange++;
      if (v >= wide / 2) aboveHalf++;
    }
    expect(outOfRange).toBe(0);
    expect(aboveHalf).toBeGreaterThan(400); // the upper half of a wide range is reachable
    expect(aboveHalf).toBeLessThan(600);
  });
  it("nextFloat is in [0, 1) with mean near 0.5", () => {
    const r = new Xorshift(12345);
    let sum: f64 = 0;
    let outOfRange = 0;
    for (let i = 0; i < 20000; i++) {
      const f = r.nextFloat();
      if (!(f >= 0.0 && f < 1.0)) outOfRange++;
      sum += f;
    }
    expect(outOfRange).toBe(0);
    const mean = sum / 20000.0;
    expect(mean).toBeGreaterThan(0.48);
    expect(mean).toBeLessThan(0.52);
  });
});
