// Band filters of the Gateway API Inference Extension (as Higress runs them): keep the hosts whose
// value lies in the lowest (or highest) 1/n of the value range, n = number of hosts, so several
// near-best hosts survive for the next filter instead of only the single best one.
// Input: candidate indices and a value per host (indexed by host). `integerWidth` reproduces the
// integer division GIE uses for queue lengths. Output: the surviving indices, in input order;
// never empty for an input with a value (the minimum itself always qualifies). NaN values never
// survive (and do not count towards the range). Infinities (an engine may print `+Inf`, and a sum
// of series may overflow to it) are the extremes they are: the band's width is taken over the
// finite values, an infinite best keeps only the hosts at it (every host at +Inf: all of them),
// where a width of Inf - Inf (NaN) once kept none. Pure.

/** One pass over the candidates' values: how many are not NaN, their min and max, and the min
 *  and max of the finite ones. */
class ValueRange {
  count: i32 = 0;
  lo: f64 = Infinity;
  hi: f64 = -Infinity;
  finiteLo: f64 = Infinity;
  finiteHi: f64 = -Infinity;

  constructor(indices: i32[], values: f64[]) {
    for (let i = 0; i < indices.length; i++) {
      const v = values[indices[i]];
      if (isNaN(v)) continue;
      this.count++;
      if (v < this.lo) this.lo = v;
      if (v > this.hi) this.hi = v;
      if (!isFinite(v)) continue;
      if (v < this.finiteLo) this.finiteLo = v;
      if (v > this.finiteHi) this.finiteHi = v;
    }
  }
}

/** The indices whose value is exactly `v` (an infinite extreme). */
function atValue(indices: i32[], values: f64[], v: f64): i32[] {
  const out = new Array<i32>();
  for (let i = 0; i < indices.length; i++) if (values[indices[i]] == v) out.push(indices[i]);
  return out;
}

/** min <= v <= min + (max - min) / n (max over the finite values) */
export function lowestBand(indices: i32[], values: f64[], integerWidth: bool): i32[] {
  const out = new Array<i32>();
  const r = new ValueRange(indices, values);
  if (r.count == 0) return out;
  const lo = r.lo;
  if (!isFinite(lo)) return atValue(indices, values, lo);
  let width = (r.finiteHi - lo) / <f64>r.count;
  if (integerWidth) width = Math.floor(width);
  const top = lo + width;
  for (let i = 0; i < indices.length; i++) {
    const v = values[indices[i]];
    if (v >= lo && v <= top) out.push(indices[i]); // lo and top finite: so is v (NaN fails both)
  }
  return out;
}

/** max - (max - min) / n <= v <= max (min over the finite values) */
export function highestBand(indices: i32[], values: f64[]): i32[] {
  const out = new Array<i32>();
  const r = new ValueRange(indices, values);
  if (r.count == 0) return out;
  const hi = r.hi;
  if (!isFinite(hi)) return atValue(indices, values, hi);
  const bottom = hi - (hi - r.finiteLo) / <f64>r.count;
  for (let i = 0; i < indices.length; i++) {
    const v = values[indices[i]];
    if (v <= hi && v >= bottom) out.push(indices[i]); // hi and bottom finite: so is v
  }
  return out;
}

export function allIndices(n: i32): i32[] {
  const out = new Array<i32>(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}
