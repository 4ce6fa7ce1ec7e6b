// The request body as the policies see it: raw bytes plus a lazily parsed JSON document.
// A body that is not JSON (or too large) is not an error: policies fall back to plain least request.
import { JsonKind, JsonValue, tapeKind, tapeMember, tapeNext, tapeStrLength } from "../../json/value";
import { parseJson } from "../../json/parse";

/** An output budget beyond any engine's context (~1M tokens): a client's larger number counts as this. */
export const MAX_OUTPUT_TOKENS: f64 = 1048576;

export class RequestBody {
  private parsed: bool = false;
  private root: JsonValue | null = null;

  constructor(public bytes: Uint8Array, public truncated: bool) {}

  get length(): i32 { return this.bytes.length; }

  /** The parsed top-level object, or null for non-JSON / truncated bodies. */
  json(): JsonValue | null {
    if (this.parsed) return this.root;
    this.parsed = true;
    if (this.truncated || this.bytes.length == 0) return null;
    const r = parseJson(this.bytes);
    const v = r.value;
    if (r.ok && v !== null && v.isObject()) this.root = v;
    return this.root;
  }

  stringField(name: string): string {
    const j = this.json();
    if (j === null) return "";
    const v = j.get(name);
    return v !== null && v.isString() ? v.str() : "";
  }

  numberField(name: string): f64 {
    const j = this.json();
    if (j === null) return 0;
    const v = j.get(name);
    return v !== null && v.isNumber() ? v.num() : 0;
  }

  /** Whether the request asks for a streamed response (`"stream": true`). */
  streams(): bool {
    const j = this.json();
    if (j === null) return false;
    const v = j.get("stream");
    return v !== null && v.bool();
  }

  /** Characters of prompt text: chat message contents, `prompt`, or Responses API `input`. */
  promptChars(): i64 {
    const j = this.json();
    if (j === null) return this.bytes.length;
    let total: i64 = 0;
    const messages = j.get("messages");
    if (messages !== null && messages.isArray()) {
      // The tape walked by index: no JsonValue per message (a long chat has thousands).
      const tape = messages.tape;
      const src = messages.src;
      const end = tapeNext(tape, messages.index);
      for (let m = messages.index + 4; m < end; m = tapeNext(tape, m)) {
        const c = tapeMember(tape, src, m, "content");
        if (c < 0) continue;
        total += tapeKind(tape, c) == JsonKind.String ? tapeStrLength(tape, src, c) : tape.at(c + 2) - tape.at(c + 1);
      }
      return total;
    }
    const prompt = j.get("prompt") !== null ? j.get("prompt") : j.get("input");
    if (prompt !== null) return prompt.isString() ? prompt.strLength() : prompt.rawEnd - prompt.rawStart;
    return this.bytes.length;
  }

  /** The output budget the client asked for: max_tokens, else max_completion_tokens, else
   *  max_output_tokens (Responses API); 0 when none is a positive number. At most MAX_OUTPUT_TOKENS:
   *  the client's number may be anything (1e999 parses as Infinity). */
  maxOutputTokens(): f64 {
    let out = this.numberField("max_tokens");
    if (!(out > 0)) out = this.numberField("max_completion_tokens");
    if (!(out > 0)) out = this.numberField("max_output_tokens");
    return out > 0 ? min(out, MAX_OUTPUT_TOKENS) : 0;
  }

  /** Estimated tokens: prompt chars / 4 + the output budget (maxOutputTokens). */
  estimatedTokens(): i64 {
    return (this.promptChars() + 3) / 4 + <i64>this.maxOutputTokens();
  }
}
