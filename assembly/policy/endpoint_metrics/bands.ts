// Band filters of the Gateway API Inference Extension (as Higress runs them): keep the hosts whose
// value lies in the lowest (or highest) 1/n of the value range, n = number of hosts, so several
// near-best hosts survive for the next filter instead of only the single best one.
// Input: candidate indices and a value per host (indexed by host). `integerWidth` reproduces the
// integer division GIE uses for queue lengths. Output: the surviving indices, in input order;
// never empty for a non-empty input (the minimum itself always qualifies). NaN values never
// survive (and do not count towards the range). Pure.

function rangeOf(indices: i32[], values: f64[]): f64[] {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < indices.length; i++) {
    const v = values[indices[i]];
    if (isNaN(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return [lo, hi];
}

function countValid(indices: i32[], values: f64[]): i32 {
  let n = 0;
  for (let i = 0; i < indices.length; i++) if (!isNaN(values[indices[i]])) n++;
  return n;
}

/** min <= v <= min + (max - min) / n */
export function lowestBand(indices: i32[], values: f64[], integerWidth: bool): i32[] {
  const out = new Array<i32>();
  const n = countValid(indices, values);
  if (n == 0) return out;
  const r = rangeOf(indices, values);
  let width = (r[1] - r[0]) / <f64>n;
  if (integerWidth) width = Math.floor(width);
  const top = r[0] + width;
  for (let i = 0; i < indices.length; i++) {
    const v = values[indices[i]];
    if (v >= r[0] && v <= top) out.push(indices[i]);
  }
  return out;
}

/** max - (max - min) / n <= v <= max */
export function highestBand(indices: i32[], values: f64[]): i32[] {
  const out = new Array<i32>();
  const n = countValid(indices, values);
  if (n == 0) return out;
  const r = rangeOf(indices, values);
  const bottom = r[1] - (r[1] - r[0]) / <f64>n;
  for (let i = 0; i < indices.length; i++) {
    const v = values[indices[i]];
    if (v <= r[1] && v >= bottom) out.push(indices[i]);
  }
  return out;
}

export function allIndices(n: i32): i32[] {
  const out = new Array<i32>(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}
