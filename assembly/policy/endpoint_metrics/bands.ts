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

/** [min, max] of the values that are not NaN; with `finite`, of the finite ones only. */
function rangeOf(indices: i32[], values: f64[], finite: bool): f64[] {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < indices.length; i++) {
    const v = values[indices[i]];
    if (isNaN(v) || (finite && !isFinite(v))) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return [lo, hi];
}

/** The indices whose value is exactly `v` (an infinite extreme). */
function atValue(indices: i32[], values: f64[], v: f64): i32[] {
  const out = new Array<i32>();
  for (let i = 0; i < indices.length; i++) if (values[indices[i]] == v) out.push(indices[i]);
  return out;
}

function countValid(indices: i32[], values: f64[]): i32 {
  let n = 0;
  for (let i = 0; i < indices.length; i++) if (!isNaN(values[indices[i]])) n++;
  return n;
}

/** min <= v <= min + (max - min) / n (max over the finite values) */
export function lowestBand(indices: i32[], values: f64[], integerWidth: bool): i32[] {
  const out = new Array<i32>();
  const n = countValid(indices, values);
  if (n == 0) return out;
  const lo = rangeOf(indices, values, false)[0];
  if (!isFinite(lo)) return atValue(indices, values, lo);
  let width = (rangeOf(indices, values, true)[1] - lo) / <f64>n;
  if (integerWidth) width = Math.floor(width);
  const top = lo + width;
  for (let i = 0; i < indices.length; i++) {
    const v = values[indices[i]];
    if (v >= lo && v <= top && isFinite(v)) out.push(indices[i]);
  }
  return out;
}

/** max - (max - min) / n <= v <= max (min over the finite values) */
export function highestBand(indices: i32[], values: f64[]): i32[] {
  const out = new Array<i32>();
  const n = countValid(indices, values);
  if (n == 0) return out;
  const hi = rangeOf(indices, values, false)[1];
  if (!isFinite(hi)) return atValue(indices, values, hi);
  const bottom = hi - (hi - rangeOf(indices, values, true)[0]) / <f64>n;
  for (let i = 0; i < indices.length; i++) {
    const v = values[indices[i]];
    if (v <= hi && v >= bottom && isFinite(v)) out.push(indices[i]);
  }
  return out;
}

export function allIndices(n: i32): i32[] {
  const out = new Array<i32>(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}
