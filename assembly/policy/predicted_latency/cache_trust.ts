// How far the prefix tree's word about a host's cache holds there (pure math; the sums live in the
// pool's model hash with the latency model's, field `<host>|c`, so every gateway learns from every
// answer: store.ts). The tree says what was sent where, not what the engine kept: a host sent more
// long prompts than its KV cache holds evicts them, yet the tree still names it, and a choice that
// counts the recompute a host lacking the prefix would do (evaluation.ts recomputeCost) kept
// sending them there (the mooncake trace: 283 of one pod's 430 long prompts picked as cached there,
// 46 of its 361 found anything cached; bench/RESULTS.md 12.1k). Where responses carry the engine's
// usage (`prompt_tokens_details.cached_tokens`: vLLM with `--enable-prompt-tokens-details`,
// SGLang; in a stream only with `stream_options.include_usage`), each one that the tree said was
// cached teaches how much of that was found; a host's trust is the moving mean of found / said,
// starting at 1, and the tree's share there counts that much. Without usage nothing is learned and
// the trust stays 1.

/** Weight of one response in a host's trust (a moving mean over about 1 / TRUST_ALPHA of them). */
export const TRUST_ALPHA: f64 = 0.1;
/** The trust's sums are forgotten by this per response (model.lua's decay of the field). */
export const TRUST_DECAY: f64 = 1.0 - TRUST_ALPHA;
/** One feature (the constant 1): the sums are the forgotten count and the forgotten sum of found / said. */
export const TRUST_K: i32 = 1;
/** A response teaches only when the tree said at least this share of its prompt was cached. */
export const TRUST_MIN_SAID: f64 = 0.1;

/** What a response teaches: found / said at most 1, or NaN when it teaches nothing (the tree said
 *  little was cached, or the response did not say what was found: `found` < 0). */
export function trustObservation(said: f64, found: f64): f64 {
  if (!(said >= TRUST_MIN_SAID) || !(found >= 0)) return NaN;
  return min(1.0, found / said);
}

/** The trust that a host's sums hold (model.ts's stats of TRUST_K features folded with TRUST_DECAY
 *  from zero): the moving mean from 1, t_n = d^n + alpha * sum_i d^(n-1-i) y_i, where the forgotten
 *  count S = (1 - d^n) / alpha gives d^n = 1 - alpha S and the forgotten sum b the rest, so
 *  t = 1 + alpha (b - S). Kept within [0, 1]; 1 for sums that are not numbers. */
export function trustOf(s: f64[]): f64 {
  if (s.length < 2) return 1.0;
  const t = 1.0 + TRUST_ALPHA * (s[1] - s[0]);
  if (!isFinite(t)) return 1.0;
  return max(0.0, min(1.0, t));
}
