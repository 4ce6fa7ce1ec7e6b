// What predicted_latency reads from response body chunks (pure): the number of SSE events
// ("data:" at a line start) and the last `"completion_tokens": N` of the usage object (final JSON
// body, or the usage chunk of a stream with include_usage). A number split across two chunks is
// missed (the event count then stands in). Never throws.

const DATA: string = "data:";
const USAGE: string = "\"completion_tokens\"";

function matchesAt(b: Uint8Array, at: i32, s: string): bool {
  if (at + s.length > b.length) return false;
  for (let j = 0; j < s.length; j++) if (<i32>b[at + j] != s.charCodeAt(j)) return false;
  return true;
}

export class ResponseTally {
  events: i32 = 0;
  /** -1 until a usage object was seen. */
  completionTokens: i64 = -1;
  /** Whether the previous chunk ended a line (an event may start at this chunk's first byte). */
  private atLineStart: bool = true;

  scan(b: Uint8Array): void {
    for (let i = 0; i < b.length; i++) {
      const c = <i32>b[i];
      if (c == 100 && (i == 0 ? this.atLineStart : b[i - 1] == 10) && matchesAt(b, i, DATA)) this.events++;
      else if (c == 34 && matchesAt(b, i, USAGE)) this.readTokens(b, i + USAGE.length);
    }
    if (b.length > 0) this.atLineStart = b[b.length - 1] == 10;
  }

  private readTokens(b: Uint8Array, at: i32): void {
    let i = at;
    while (i < b.length && (b[i] == 32 || b[i] == 58)) i++;
    let v: i64 = 0;
    let digits = 0;
    while (i < b.length && b[i] >= 48 && b[i] <= 57 && digits < 12) { v = v * 10 + <i64>(b[i] - 48); i++; digits++; }
    if (digits > 0) this.completionTokens = v;
  }

  /** Output tokens: the usage count, else the SSE events that carried one (minus [DONE]). */
  tokens(): i64 {
    if (this.completionTokens >= 0) return this.completionTokens;
    return this.events > 1 ? <i64>(this.events - 1) : 0;
  }
}
