// The prefix term of `scoring: weighted` (lb_config prefixWeight, the Endpoint Picker's prefix
// scorer): how much of this request's prefix each host already served, read from the prefix tree
// prefix_cache keeps in Redis. `values` are the level keys' values (shallowest first; "" = absent).
// A level naming host h means h served a request whose first i blocks were these, so its KV cache
// holds them: score(h) = deepest such level / number of levels, walking only while levels exist.
// Pure; hosts that hold nothing score 0.
export function prefixScores(values: string[], hosts: string[]): f64[] {
  const scores = new Array<f64>(hosts.length).fill(0.0);
  const n = values.length;
  if (n == 0) return scores;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v.length == 0) break;
    const at = hosts.indexOf(v);
    if (at >= 0) scores[at] = <f64>(i + 1) / <f64>n;
  }
  return scores;
}
