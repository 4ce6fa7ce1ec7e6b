// `npm run bench -- calibrate`: the simulator's profiles measured the way published vLLM numbers
// were measured, one engine in virtual time, next to those numbers with their sources and the
// error. Measurements: decode time per output token at a fixed running batch (all requests
// decoding, no prefill in the step), cold prefill TTFT of one prompt on an idle engine (API
// overhead excluded), and peak output tokens/s with the batch full. Pure simulation, no Redis.
// Failure behaviour: none beyond the engine's (profile names are fixed here).
import { SimEngine } from "../host-test/sim/engine.js";
import { resolveProfile } from "../host-test/sim/profiles.js";
import { EventClock } from "./virtual/event-clock.js";

/** `derived`: the profile's constants were set from this very number (a consistency check, not an independent one). */
interface Check { profile: string; what: string; published: number; unit: string; source: string; derived: boolean; measure: () => number }

function words(n: number, salt: number): string[] {
  return Array.from({ length: n }, (_, i) => `w${salt}x${i}`);
}

/** Mean ms per output token with `batch` requests decoding together (prompts of 16 tokens). */
function decodeMsPerToken(profile: string, batch: number): number {
  const clock = new EventClock();
  const engine = new SimEngine({ profile: resolveProfile(profile, { jitter: 0 }), mode: "virtual", clock, seed: 1 });
  const gaps: number[] = [];
  for (let i = 0; i < batch; i++) {
    const r = engine.submit({ promptTokens: words(16, i), maxTokens: 64, ignoreEos: true, arrivalMs: 0 });
    let last: number | null = null;
    r.on("token", (t) => { if (last !== null && t.index >= 8 && t.index < 56) gaps.push(t.atMs - last); last = t.atMs; });
  }
  while (clock.runNext());
  return gaps.reduce((a, b) => a + b, 0) / gaps.length;
}

/** TTFT of one prompt of `tokens` on an idle engine (no API overhead). */
function coldTtftMs(profile: string, tokens: number): number {
  const clock = new EventClock();
  const engine = new SimEngine({ profile: resolveProfile(profile, { jitter: 0, maxModelLen: 1 << 20 }), mode: "virtual", clock, seed: 1 });
  const r = engine.submit({ promptTokens: words(tokens, 0), maxTokens: 2, ignoreEos: true, arrivalMs: 0 });
  let ttft = 0;
  r.on("firstToken", (t) => { ttft = t.atMs; });
  while (clock.runNext());
  return ttft;
}

/** Output tokens/s with the batch kept full (maxNumSeqs running, short prompts, long outputs). */
function peakOutputTokPerSec(profile: string): number {
  const p = resolveProfile(profile, { jitter: 0 });
  return (1000 * p.maxNumSeqs) / decodeMsPerToken(profile, p.maxNumSeqs);
}

const REF = "shared/reference/backends-and-workloads.md (BLIS-form magnitudes, llm-d)";
const CHECKS: Check[] = [
  { profile: "llama-8b-h100", what: "decode ms/token, batch 1", published: 7.4, unit: "ms", source: REF, derived: true, measure: () => decodeMsPerToken("llama-8b-h100", 1) },
  { profile: "llama-8b-h100", what: "decode ms/token, batch 128", published: 12, unit: "ms", source: REF, derived: true, measure: () => decodeMsPerToken("llama-8b-h100", 128) },
  { profile: "llama-8b-h100", what: "peak output tok/s (batch 256)", published: 12_500, unit: "tok/s", source: "morphllm.com/vllm-benchmarks (Llama 3.1 8B BF16, 1xH100, FlashInfer)", derived: false, measure: () => peakOutputTokPerSec("llama-8b-h100") },
  { profile: "llama-8b-h100", what: "prefill tok/s (8k prompt, cold)", published: 45_000, unit: "tok/s", source: REF, derived: true, measure: () => 8192 / (coldTtftMs("llama-8b-h100", 8192) / 1000) },
  { profile: "qwen3-32b-2xh100", what: "decode ms/token, batch 1", published: 25, unit: "ms", source: REF, derived: true, measure: () => decodeMsPerToken("qwen3-32b-2xh100", 1) },
  { profile: "qwen3-32b-2xh100", what: "decode ms/token, batch 256", published: 45, unit: "ms", source: REF, derived: true, measure: () => decodeMsPerToken("qwen3-32b-2xh100", 256) },
  { profile: "qwen3-32b-2xh100", what: "TTFT of a 10k-token prompt, cold", published: 4300, unit: "ms", source: REF + " (load conditions not stated)", derived: false, measure: () => coldTtftMs("qwen3-32b-2xh100", 10_000) },
];

export function calibrationTable(): string {
  const lines = ["| profile | measurement | simulator | published | error | independent | source |", "|---|---|---:|---:|---:|---|---|"];
  for (const c of CHECKS) {
    const v = c.measure();
    const err = (100 * (v - c.published)) / c.published;
    const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
    lines.push(`| ${c.profile} | ${c.what} | ${fmt(v)} ${c.unit} | ${fmt(c.published)} ${c.unit} | ${err >= 0 ? "+" : ""}${err.toFixed(0)}% | ${c.derived ? "no (profile set from it)" : "yes"} | ${c.source} |`);
  }
  return lines.join("\n");
}
