// The text Higress hashes for a JSON value: what gjson's Result.String() returns, as UTF-8 bytes.
// Higress builds prefix blocks from `role.String()` and `content.String()`, so keys only match
// Higress's if every kind of value renders the same way:
//   string -> decoded text; null -> ""; true/false -> "true"/"false";
//   object/array -> the raw JSON text as it appears in the body (whitespace included);
//   number -> its raw text when it is an integer literal (`-?[0-9]+`), else Go's
//             strconv.FormatFloat(v, 'f', -1, 64): shortest round-trip digits, never an exponent
//             ("1.50" -> "1.5", "1e3" -> "1000", overflow -> "+Inf").
// Input: a value of a parsed document (its tape index). Never throws. Known gap: AssemblyScript's
// dtoa (Grisu2) can pick a longer digit string than Go's shortest one for rare doubles; only
// non-integer numeric contents are affected, which chat bodies do not carry.
import { JsonKind, JsonValue, tapeKind } from "../json/value";
import { JsonTape, TAPE_ESCAPES } from "../json/tape";
import { unescapeInto } from "../json/unescape";
import { utf8Encode } from "../util/utf8";

/** Bytes [start, end) of `bytes` hold a value's text; `bytes` may be a view of the body (no copy). */
export class TextSlice {
  constructor(public bytes: Uint8Array, public start: i32, public end: i32) {}
}

/**
 * Fills `out` with gjson's String() of the value at tape index `i` without allocating, except for
 * escaped strings longer than `scratch` (a bigger scratch is made and returned for reuse) and
 * non-integer numbers. Returns the scratch to keep.
 */
export function gjsonTextAt(tape: JsonTape, src: Uint8Array, i: i32, scratch: Uint8Array, out: TextSlice): Uint8Array {
  const kind = tapeKind(tape, i);
  const start = tape.at(i + 1);
  const end = tape.at(i + 2);
  if (kind == JsonKind.String) {
    if ((tape.at(i) & TAPE_ESCAPES) == 0) {
      out.bytes = src; out.start = start + 1; out.end = end - 1;
      return scratch;
    }
    const len = end - start - 2;
    if (scratch.length < len) scratch = new Uint8Array(max(len, scratch.length << 1));
    out.bytes = scratch; out.start = 0;
    out.end = unescapeInto(src.dataStart + <usize>(start + 1), len, scratch.dataStart);
    return scratch;
  }
  if (kind == JsonKind.Null) {
    out.bytes = src; out.start = start; out.end = start;
    return scratch;
  }
  if (kind == JsonKind.Number && !isIntegerLiteral(src, start, end)) {
    const t = utf8Encode(goFormatFloat(new JsonValue(tape, src, i).num()));
    out.bytes = t; out.start = 0; out.end = t.length;
    return scratch;
  }
  // Objects, arrays, booleans and integer literals: their raw JSON text ("true"/"false" are).
  out.bytes = src; out.start = start; out.end = end;
  return scratch;
}

function isIntegerLiteral(src: Uint8Array, start: i32, end: i32): bool {
  let i = start;
  if (i < end && src[i] == 0x2D) i++;
  for (; i < end; i++) {
    const c = src[i];
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** Go's strconv.FormatFloat(x, 'f', -1, 64). */
export function goFormatFloat(x: f64): string {
  if (isNaN(x)) return "NaN";
  if (!isFinite(x)) return x > 0 ? "+Inf" : "-Inf";
  if (x == 0) return (reinterpret<u64>(x) >> 63) != 0 ? "-0" : "0"; // toString() drops the sign of -0
  // AssemblyScript prints shortest digits as "d.ddd", "ddd.0", "d.ddde+N" or "de-N".
  let s = x.toString();
  let sign = "";
  if (s.startsWith("-")) { sign = "-"; s = s.substring(1); }
  let exp = 0;
  const e = s.indexOf("e");
  if (e >= 0) {
    exp = I32.parseInt(s.substring(e + 1).replace("+", ""));
    s = s.substring(0, e);
  }
  const dot = s.indexOf(".");
  let digits = dot >= 0 ? s.substring(0, dot) + s.substring(dot + 1) : s;
  let point = (dot >= 0 ? dot : s.length) + exp; // digits before the decimal point
  // Normalise: no leading zeros (keeping the point in place), no trailing zeros.
  let lead = 0;
  while (lead < digits.length - 1 && digits.charCodeAt(lead) == 0x30) lead++;
  digits = digits.substring(lead);
  point -= lead;
  let end = digits.length;
  while (end > 1 && digits.charCodeAt(end - 1) == 0x30) end--;
  digits = digits.substring(0, end);
  if (digits == "0") return sign + "0";
  if (point <= 0) return sign + "0." + "0".repeat(-point) + digits;
  if (point >= digits.length) return sign + digits + "0".repeat(point - digits.length);
  return sign + digits.substring(0, point) + "." + digits.substring(point);
}
