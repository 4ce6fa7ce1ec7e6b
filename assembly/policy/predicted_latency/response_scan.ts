// What predicted_latency reads from response body chunks (pure): the number of SSE events
// ("data:" at a line start) and the last `"completion_tokens": N`, `"prompt_tokens": N` and
// `"cached_tokens": N` (prompt_tokens_details) of the usage object (final JSON body, or the usage
// chunk of a stream with include_usage). A key inside generated text is escaped (\"), so it never
// matches. A number split across two chunks is missed (the event count then stands in for the
// output tokens; the cached share is then unknown). Every response body passes here, so the
// scan reads bytes unchecked and compares a key only where the byte after a quote can start one
// (4.5-5.8 µs per KiB, bench/RESULTS.md 12.1k). Never throws.

const DATA: string = "data:";
const USAGE: string = "\"completion_tokens\"";
const PROMPT: string = "\"prompt_tokens\"";
const CACHED: string = "\"cached_tokens\"";

function matchesAt(b: Uint8Array, at: i32, s: string): bool {
  const n = s.length;
  if (at + n > b.length) return false;
  const p = b.dataStart + <usize>at;
  for (let j = 0; j < n; j++) if (<i32>load<u8>(p + <usize>j) != <i32>s.charCodeAt(j)) return false;
  return true;
}

/** The number after a key at `at` (": N"), or `previous` when none follows in this chunk. */
function readCount(b: Uint8Array, at: i32, previous: i64): i64 {
  let i = at;
  while (i < b.length && (b[i] == 32 || b[i] == 58)) i++;
  let v: i64 = 0;
  let digits = 0;
  while (i < b.length && b[i] >= 48 && b[i] <= 57 && digits < 12) { v = v * 10 + <i64>(b[i] - 48); i++; digits++; }
  return digits > 0 ? v : previous;
}

export class ResponseTally {
  events: i32 = 0;
  /** -1 until a usage object was seen. */
  completionTokens: i64 = -1;
  /** The usage's prompt_tokens and prompt_tokens_details.cached_tokens; -1 until seen. */
  promptTokens: i64 = -1;
  cachedTokens: i64 = -1;
  /** Whether the previous chunk ended a line (an event may start at this chunk's first byte). */
  private atLineStart: bool = true;

  scan(b: Uint8Array): void {
    const n = b.length;
    const p = b.dataStart;
    let lineStart = this.atLineStart;
    for (let i = 0; i < n; i++) {
      const c = <i32>load<u8>(p + <usize>i);
      if (c == 10) { lineStart = true; continue; }
      if (c == 100) {
        if (lineStart && matchesAt(b, i, DATA)) this.events++;
      } else if (c == 34 && i + 1 < n) {
        // A key's second byte picks the one it may be: "c(ompletion|ached)_tokens", "p(rompt)_tokens".
        const d = <i32>load<u8>(p + <usize>(i + 1));
        if (d == 99) {
          if (matchesAt(b, i, USAGE)) this.completionTokens = readCount(b, i + USAGE.length, this.completionTokens);
          else if (matchesAt(b, i, CACHED)) this.cachedTokens = readCount(b, i + CACHED.length, this.cachedTokens);
        } else if (d == 112 && matchesAt(b, i, PROMPT)) this.promptTokens = readCount(b, i + PROMPT.length, this.promptTokens);
      }
      lineStart = false;
    }
    this.atLineStart = lineStart;
  }

  /** The share of the prompt the engine found cached (usage), -1 when the usage did not say. */
  cachedShare(): f64 {
    if (this.promptTokens <= 0 || this.cachedTokens < 0) return -1;
    return min(1.0, <f64>this.cachedTokens / <f64>this.promptTokens);
  }

  /** Output tokens: the usage count, else the SSE events that carried one (minus [DONE]). */
  tokens(): i64 {
    if (this.completionTokens >= 0) return this.completionTokens;
    return this.events > 1 ? <i64>(this.events - 1) : 0;
  }
}
