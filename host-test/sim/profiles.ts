// Named hardware/model profiles for the simulated model server.
// Step time of one engine step = stepBaseMs + prefillMsPerToken * prefill_tokens
//   + decodeMsPerSeq * decode_seqs (the BLIS form), times a jitter factor in [1-jitter, 1+jitter].
// Numbers for the real profiles come from /work/shared/reference/backends-and-workloads.md.
// resolveProfile throws on an unknown name (host-side config error, reported at startup).

export interface SimProfile {
  name: string;
  /** Served model name (the `model` field clients send, `model_name` label in /metrics). */
  modelName: string;
  /** Tokens per KV block. */
  blockSize: number;
  /** KV pool size in blocks. */
  numGpuBlocks: number;
  /** Running batch cap. */
  maxNumSeqs: number;
  /** Token budget per engine step (decode tokens + prefill chunks). */
  maxNumBatchedTokens: number;
  /** Longest prompt + output accepted (requests above get 400, as vLLM does). */
  maxModelLen: number;
  stepBaseMs: number;
  prefillMsPerToken: number;
  decodeMsPerSeq: number;
  /** Simulated API-server overhead added before a request reaches the engine, uniform [min, max] ms. */
  apiOverheadMs: [number, number];
  /** Relative step-time jitter (0.07 = +-7%). */
  jitter: number;
  /** Output length when ignore_eos is false: log-normal with this mean, capped by max_tokens. */
  meanOutputTokens: number;
  outputTokensSigma: number;
}

const LLAMA_8B_H100: SimProfile = {
  name: "llama-8b-h100",
  modelName: "meta-llama/Llama-3.1-8B-Instruct",
  blockSize: 16,
  numGpuBlocks: 29_184, // ~467k tokens
  maxNumSeqs: 256,
  maxNumBatchedTokens: 8192,
  maxModelLen: 32_768,
  stepBaseMs: 7,
  prefillMsPerToken: 0.02, // ~45k prefill tok/s
  decodeMsPerSeq: 0.04, // ~7.4 ms/token at batch 1, ~12 ms at batch 128
  apiOverheadMs: [5, 15],
  jitter: 0.07,
  meanOutputTokens: 256,
  outputTokensSigma: 0.8,
};

const QWEN3_32B_2XH100: SimProfile = {
  name: "qwen3-32b-2xh100",
  modelName: "Qwen/Qwen3-32B",
  blockSize: 16,
  numGpuBlocks: 19_208, // ~307k tokens
  maxNumSeqs: 256,
  maxNumBatchedTokens: 8192,
  maxModelLen: 40_960,
  stepBaseMs: 25,
  prefillMsPerToken: 0.05, // ~20k prefill tok/s
  decodeMsPerSeq: 0.078, // 25 ms at batch 1 -> ~45 ms at batch 256
  apiOverheadMs: [5, 15],
  jitter: 0.07,
  meanOutputTokens: 512,
  outputTokensSigma: 0.8,
};

/**
 * Galileo's setting: servers that run ONE request at a time (no batching) and whose time grows with
 * the input: prefill-dominated (~4k prompt tok/s, a large model on one A100 without batching;
 * an 8k-token input takes ~2 s, a 500-token one ~0.2 s with 16 output tokens).
 */
const A100_UNBATCHED: SimProfile = {
  name: "a100-unbatched",
  modelName: "sim-a100-unbatched",
  blockSize: 16,
  numGpuBlocks: 4096, // 64k tokens: never the limit with one request at a time
  maxNumSeqs: 1,
  maxNumBatchedTokens: 16_384, // a whole prompt in one step
  maxModelLen: 32_768,
  stepBaseMs: 7,
  prefillMsPerToken: 0.25,
  decodeMsPerSeq: 0,
  apiOverheadMs: [5, 15],
  jitter: 0.07,
  meanOutputTokens: 16,
  outputTokensSigma: 0.5,
};

/** Small and fast, for tests: 8 seqs, 256-token steps, 8k-token pool, ~1-6 ms steps. */
const TINY: SimProfile = {
  name: "tiny",
  modelName: "sim-tiny",
  blockSize: 16,
  numGpuBlocks: 512,
  maxNumSeqs: 8,
  maxNumBatchedTokens: 256,
  maxModelLen: 4096,
  stepBaseMs: 1,
  prefillMsPerToken: 0.02,
  decodeMsPerSeq: 0.05,
  apiOverheadMs: [0.5, 1.5],
  jitter: 0.05,
  meanOutputTokens: 24,
  outputTokensSigma: 0.6,
};

export const PROFILES: Readonly<Record<string, SimProfile>> = {
  [LLAMA_8B_H100.name]: LLAMA_8B_H100,
  [QWEN3_32B_2XH100.name]: QWEN3_32B_2XH100,
  [TINY.name]: TINY,
  [A100_UNBATCHED.name]: A100_UNBATCHED,
};

/** A profile by name (or as given) with overrides applied; maxModelLen is clamped to the pool. */
export function resolveProfile(profile: string | SimProfile = "tiny", overrides: Partial<SimProfile> = {}): SimProfile {
  const base = typeof profile === "string" ? PROFILES[profile] : profile;
  if (!base) {
    throw new Error(`unknown sim profile "${String(profile)}"; known: ${Object.keys(PROFILES).join(", ")}`);
  }
  const merged: SimProfile = { ...base, ...overrides };
  // A request longer than the whole pool could never be scheduled; vLLM refuses to start then.
  merged.maxModelLen = Math.min(merged.maxModelLen, merged.numGpuBlocks * merged.blockSize);
  return merged;
}
