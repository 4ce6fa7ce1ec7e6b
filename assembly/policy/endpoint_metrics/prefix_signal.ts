// The prefix term of `scoring: weighted` (lb_config prefixWeight, the Endpoint Picker's prefix
// scorer): how much of this request's prefix each host already served, read from the prefix tree
// prefix_cache keeps in Redis. `values` are the level keys' values (shallowest first; "" = absent).
// A level naming host h means h served a request whose first i blocks were these, so its KV cache
// holds them: score(h) = deepest such level / number of levels, walking only while levels exist.
// Pure; hosts that hold nothing score 0. A level's host is found by the set's index (O(levels),
// not O(levels x candidates): 64 levels on 256 candidates were 16,384 string comparisons a pick).
import { CandidateSet } from "../../services/candidates/candidates";

export function prefixScores(values: string[], c: CandidateSet): f64[] {
  const scores = new Array<f64>(c.size).fill(0.0);
  const n = values.length;
  if (n == 0) return scores;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v.length == 0) break;
    const at = c.indexOf(v);
    if (at >= 0) scores[at] = <f64>(i + 1) / <f64>n;
  }
  return scores;
}
