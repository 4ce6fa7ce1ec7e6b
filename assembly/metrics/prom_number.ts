// Number tokens of the Prometheus text format (sample values and timestamps).
// Input: a byte slice [start, end) of a UTF-8 body, already cut at whitespace (scanNumberAt), or a
// slice of a string (scanNumber, for tests and callers holding strings).
// Accepts what Go's strconv.ParseFloat accepts for these bodies: [+-]digits[.digits][e[+-]digits],
// ".5", "5.", and the words NaN / Inf / Infinity in any case with an optional sign.
// Failure: returns false (the caller skips the line); never throws, never allocates on the fast path.

import { codeAt } from "./chars";
import { isDigit } from "../util/ascii";
import { utf8Encode } from "../util/utf8";

/** Result slot reused across calls so scanning a number allocates nothing. */
export class ScannedNumber {
  value: f64 = 0;
}

// 10^0..10^22 are exact in f64; one multiply or divide of an exact mantissa (<= 2^53) by one of
// them is correctly rounded (Clinger's fast path), which covers nearly every value vLLM prints.
const EXACT_POWERS_OF_TEN: StaticArray<f64> = [
  1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];
const MAX_EXACT_MANTISSA: u64 = 1 << 53;
// 19 decimal digits always fit in a u64; longer mantissas take the slow path.
const MAX_FAST_DIGITS: i32 = 19;
// Exponents beyond this already saturate f64 (to 0 or Infinity); capping avoids i32 overflow.
const EXPONENT_CAP: i32 = 100000;

/** Case-insensitive match of the whole slice against a lowercase ASCII word. */
function sliceIsWord(base: usize, start: i32, end: i32, word: string): bool {
  if (end - start != word.length) return false;
  for (let i = 0; i < word.length; i++) {
    if ((codeAt(base, start + i) | 0x20) != word.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Scans `text[start, end)` as one number. Returns false when the slice is not exactly a number.
 */
export function scanNumber(text: string, start: i32, end: i32, out: ScannedNumber): bool {
  if (start < 0 || end > text.length || start >= end) return false;
  const bytes = utf8Encode(text.substring(start, end));
  return scanNumberAt(bytes.dataStart, 0, bytes.length, out);
}

/** Scans the bytes [start, end) at `base` as one number (the caller keeps them in bounds). */
export function scanNumberAt(base: usize, start: i32, end: i32, out: ScannedNumber): bool {
  if (start >= end) return false;
  let p = start;
  let negative = false;
  let c = codeAt(base, p);
  if (c == 43 /* + */ || c == 45 /* - */) {
    negative = c == 45;
    p++;
    if (p >= end) return false;
    c = codeAt(base, p);
  }
  const lower = c | 0x20;
  if (lower == 105 /* i */ || lower == 110 /* n */) {
    if (sliceIsWord(base, p, end, "nan")) { out.value = NaN; return true; }
    if (sliceIsWord(base, p, end, "inf") || sliceIsWord(base, p, end, "infinity")) {
      out.value = negative ? -Infinity : Infinity;
      return true;
    }
    return false;
  }

  let mantissa: u64 = 0;
  let significantDigits = 0;
  let decimalExponent = 0;
  let sawDigit = false;
  let sawPoint = false;
  for (; p < end; p++) {
    c = codeAt(base, p);
    if (isDigit(c)) {
      sawDigit = true;
      if (mantissa == 0 && c == 48) {
        // A leading zero adds no precision, but after the point it still shifts the scale.
        if (sawPoint) decimalExponent--;
        continue;
      }
      if (significantDigits < MAX_FAST_DIGITS) {
        mantissa = mantissa * 10 + <u64>(c - 48);
        if (sawPoint) decimalExponent--;
      } else if (!sawPoint) {
        decimalExponent++;
      }
      significantDigits++;
    } else if (c == 46 /* . */ && !sawPoint) {
      sawPoint = true;
    } else {
      break;
    }
  }
  if (!sawDigit) return false;

  if (p < end) {
    c = codeAt(base, p);
    if ((c | 0x20) != 101 /* e */) return false;
    p++;
    let exponentNegative = false;
    if (p < end) {
      c = codeAt(base, p);
      if (c == 43 || c == 45) { exponentNegative = c == 45; p++; }
    }
    if (p >= end) return false;
    let exponent = 0;
    for (; p < end; p++) {
      c = codeAt(base, p);
      if (!isDigit(c)) return false;
      if (exponent < EXPONENT_CAP) exponent = exponent * 10 + (c - 48);
    }
    decimalExponent += exponentNegative ? -exponent : exponent;
  }

  if (mantissa == 0) {
    out.value = negative ? -0.0 : 0.0;
    return true;
  }
  if (significantDigits <= MAX_FAST_DIGITS && mantissa <= MAX_EXACT_MANTISSA &&
      decimalExponent >= -22 && decimalExponent <= 22) {
    let value = <f64>mantissa;
    if (decimalExponent >= 0) value *= unchecked(EXACT_POWERS_OF_TEN[decimalExponent]);
    else value /= unchecked(EXACT_POWERS_OF_TEN[-decimalExponent]);
    out.value = negative ? -value : value;
    return true;
  }
  // Rare (17-digit reprs, huge exponents): the standard library's parser on the validated slice.
  out.value = parseFloat(String.UTF8.decodeUnsafe(base + <usize>start, <usize>(end - start)));
  return true;
}
