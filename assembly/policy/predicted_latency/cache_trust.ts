// How far the prefix tree's word about a host's cache holds there (pure, per VM). The tree says
// what was sent where, not what the engine kept: a host sent more long prompts than its KV cache
// holds evicts them, yet the tree still names it, and a choice that counts the recompute a host
// lacking the prefix would do (evaluation.ts recomputeCost) kept sending them there (the mooncake
// trace: 283 of one pod's 430 long prompts picked as cached there, 46 of its 361 found anything
// cached; bench/RESULTS.md 12.1k). Where responses carry the engine's usage
// (`prompt_tokens_details.cached_tokens`: vLLM with `--enable-prompt-tokens-details`, SGLang; in
// a stream only with `stream_options.include_usage`), each one that the tree said was cached
// teaches how much of that was found; a host's trust is the moving mean of found / said, and the
// tree's share there counts that much. Without usage nothing is learned and the trust stays 1.

/** Weight of one response in a host's trust (a moving mean over about 1 / TRUST_ALPHA of them). */
export const TRUST_ALPHA: f64 = 0.1;
/** A response teaches only when the tree said at least this share of its prompt was cached. */
export const TRUST_MIN_SAID: f64 = 0.1;
/** Hosts remembered at most (pods come and go with new addresses); beyond, all start again at 1. */
export const TRUST_MAX_HOSTS: i32 = 4096;

export class CacheTrust {
  private byHost: Map<string, f64> = new Map();

  /** Hosts with a trust learned. */
  get size(): i32 { return this.byHost.size; }

  /** The share of the tree's word that holds at `address` (1 until learned). */
  of(address: string): f64 {
    return this.byHost.has(address) ? this.byHost.get(address) : 1.0;
  }

  /** A response from `address`: the tree said `said` of its prompt was cached there, the engine
   *  found `found` (-1: the response did not say). */
  observe(address: string, said: f64, found: f64): void {
    if (!(said >= TRUST_MIN_SAID) || !(found >= 0)) return;
    const ratio = min(1.0, found / said);
    const t = this.of(address);
    if (!this.byHost.has(address) && this.byHost.size >= TRUST_MAX_HOSTS) this.byHost.clear();
    this.byHost.set(address, t + TRUST_ALPHA * (ratio - t));
  }
}
