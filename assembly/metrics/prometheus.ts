// Streaming scanner for the Prometheus text exposition format (and the OpenMetrics subset that
// model servers print), used on vLLM / SGLang `/metrics` bodies.
// Input: the whole body as a string, and a visitor. The visitor first sees only the metric name
// (`wants`); labels, value and timestamp are scanned only for the lines it wants, so a policy
// that reads five gauges pays little for the hundreds of histogram lines around them.
// Failure behaviour: never throws. Comments (`# HELP`, `# TYPE`, `# EOF`), blank lines and any
// malformed line are skipped; an unterminated last line is dropped by default because Higress
// cuts bodies at 64 KiB and a cut line can carry a wrong but well-formed value ("12" of "123").

import { codeAt, isBlank, isDigit, isLetter } from "./chars";
import { ScannedNumber, scanNumber } from "./prom_number";

// Metric names: [a-zA-Z_:][a-zA-Z0-9_:]*; label names: [a-zA-Z_][a-zA-Z0-9_]*.
// @ts-ignore: decorator
@inline function isNameStart(c: i32): bool {
  return isLetter(c) || c == 95 /* _ */ || c == 58 /* : */;
}

// @ts-ignore: decorator
@inline function isNameChar(c: i32): bool {
  return isNameStart(c) || isDigit(c);
}

// @ts-ignore: decorator
@inline function isLabelNameStart(c: i32): bool {
  return isLetter(c) || c == 95;
}

// @ts-ignore: decorator
@inline function isLabelNameChar(c: i32): bool {
  return isLabelNameStart(c) || isDigit(c);
}

function skipBlanks(base: usize, p: i32, end: i32): i32 {
  while (p < end && isBlank(codeAt(base, p))) p++;
  return p;
}

/** Index of the next '\n' at or after `p`, or `len`. Checks four UTF-16 units per load. */
function findNewline(base: usize, p: i32, len: i32): i32 {
  while (p + 4 <= len) {
    const word = load<u64>(base + (<usize>p << 1)) ^ 0x000A000A000A000A;
    // Standard "has a zero lane" test on 16-bit lanes: a lane equal to '\n' became zero.
    if (((word - 0x0001000100010001) & ~word & 0x8000800080008000) != 0) break;
    p += 4;
  }
  while (p < len && codeAt(base, p) != 10) p++;
  return p;
}

/**
 * Validates a label block starting just after '{'. Returns the index of the closing '}', or -1.
 * Accepts blanks around tokens and one trailing comma, like Prometheus' own parser.
 */
function scanLabelBlock(base: usize, p: i32, end: i32): i32 {
  p = skipBlanks(base, p, end);
  if (p < end && codeAt(base, p) == 125 /* } */) return p;
  while (p < end) {
    if (!isLabelNameStart(codeAt(base, p))) return -1;
    p++;
    while (p < end && isLabelNameChar(codeAt(base, p))) p++;
    p = skipBlanks(base, p, end);
    if (p >= end || codeAt(base, p) != 61 /* = */) return -1;
    p = skipBlanks(base, p + 1, end);
    if (p >= end || codeAt(base, p) != 34 /* " */) return -1;
    p++;
    while (true) {
      if (p >= end) return -1; // unterminated quote
      const c = codeAt(base, p);
      if (c == 34) break;
      p += c == 92 /* \ */ ? 2 : 1;
    }
    p = skipBlanks(base, p + 1, end);
    if (p >= end) return -1;
    const c = codeAt(base, p);
    if (c == 125) return p;
    if (c != 44 /* , */) return -1;
    p = skipBlanks(base, p + 1, end);
    if (p < end && codeAt(base, p) == 125) return p; // trailing comma
  }
  return -1;
}

/**
 * One sample line, valid only during the visitor call (the object is reused for every line).
 * Offsets index the original body; accessors read it in place and allocate only in `name()`
 * and `label()`.
 */
export class PromSample {
  text: string = "";
  nameStart: i32 = 0;
  nameEnd: i32 = 0;
  /** Inside the braces, excluding them; empty when the line has no labels. */
  labelsStart: i32 = 0;
  labelsEnd: i32 = 0;
  value: f64 = 0;
  hasTimestamp: bool = false;
  /** As printed (milliseconds in the text format, seconds in OpenMetrics). */
  timestamp: f64 = 0;
  // Raw (still escaped) bounds of the value found by the last successful `seekLabel`.
  private foundStart: i32 = 0;
  private foundEnd: i32 = 0;

  name(): string {
    return this.text.substring(this.nameStart, this.nameEnd);
  }

  nameIs(name: string): bool {
    const length = this.nameEnd - this.nameStart;
    if (length != name.length) return false;
    return memory.compare(
      changetype<usize>(this.text) + (<usize>this.nameStart << 1),
      changetype<usize>(name), <usize>length << 1) == 0;
  }

  nameStartsWith(prefix: string): bool {
    const length = prefix.length;
    if (this.nameEnd - this.nameStart < length) return false;
    return memory.compare(
      changetype<usize>(this.text) + (<usize>this.nameStart << 1),
      changetype<usize>(prefix), <usize>length << 1) == 0;
  }

  hasLabel(key: string): bool {
    return this.seekLabel(key);
  }

  /** The unescaped value of label `key`, or "" when the label is absent. */
  label(key: string): string {
    if (!this.seekLabel(key)) return "";
    const base = changetype<usize>(this.text);
    let p = this.foundStart;
    const end = this.foundEnd;
    if (!hasBackslash(base, p, end)) return this.text.substring(p, end);
    // Decoded text is never longer than the raw text; one buffer avoids quadratic concatenation.
    const buffer = new StaticArray<u16>(end - p);
    let n = 0;
    while (p < end) {
      const c = codeAt(base, p);
      if (c == 92 && p + 1 < end) {
        const escaped = codeAt(base, p + 1);
        if (escaped == 110 /* n */) {
          buffer[n++] = 10;
        } else if (escaped == 34 || escaped == 92) {
          buffer[n++] = <u16>escaped;
        } else {
          // Not an escape of the format: keep both characters rather than guess.
          buffer[n++] = 92;
          buffer[n++] = <u16>escaped;
        }
        p += 2;
      } else {
        buffer[n++] = <u16>c;
        p++;
      }
    }
    return String.UTF16.decodeUnsafe(changetype<usize>(buffer), <usize>n << 1);
  }

  /** True when label `key` is present and its unescaped value equals `expected`. */
  labelIs(key: string, expected: string): bool {
    if (!this.seekLabel(key)) return false;
    const base = changetype<usize>(this.text);
    const start = this.foundStart;
    const end = this.foundEnd;
    // Escaped values are rare: compare the decoded copy rather than keep a second decoder here.
    if (hasBackslash(base, start, end)) return this.label(key) == expected;
    const length = end - start;
    return length == expected.length &&
      memory.compare(base + (<usize>start << 1), changetype<usize>(expected), <usize>length << 1) == 0;
  }

  /** Model filters: a series passes when label `key` is absent or equals `expected`. */
  labelIsOrMissing(key: string, expected: string): bool {
    if (!this.seekLabel(key)) return true;
    return this.labelIs(key, expected);
  }

  private seekLabel(key: string): bool {
    const base = changetype<usize>(this.text);
    const keyBase = changetype<usize>(key);
    const keyBytes = <usize>key.length << 1;
    const end = this.labelsEnd;
    let p = skipBlanks(base, this.labelsStart, end);
    // The block was validated by scanLabelBlock, so this walk only needs bounds checks.
    while (p < end) {
      const nameStart = p;
      while (p < end && isLabelNameChar(codeAt(base, p))) p++;
      const matches = (<usize>(p - nameStart) << 1) == keyBytes &&
        memory.compare(base + (<usize>nameStart << 1), keyBase, keyBytes) == 0;
      while (p < end && codeAt(base, p) != 34) p++;
      const valueStart = p + 1;
      p = valueStart;
      while (p < end) {
        const c = codeAt(base, p);
        if (c == 34) break;
        p += c == 92 ? 2 : 1;
      }
      if (p > end) p = end;
      if (matches) {
        this.foundStart = valueStart;
        this.foundEnd = p;
        return true;
      }
      p++; // closing quote
      while (p < end && !isLabelNameStart(codeAt(base, p))) p++; // blanks and the comma
    }
    return false;
  }
}

function hasBackslash(base: usize, p: i32, end: i32): bool {
  for (; p < end; p++) if (codeAt(base, p) == 92) return true;
  return false;
}

/**
 * Receives the samples of a body. Subclass it: `wants` filters by name before anything else is
 * scanned (only the name accessors are meaningful there), `visit` gets each complete sample.
 */
export class SampleVisitor {
  wants(sample: PromSample): bool {
    return true;
  }

  visit(sample: PromSample): void {}
}

/**
 * Calls `visitor` for every well-formed sample line of `text`, in order.
 * `acceptUnterminatedLastLine`: set it only when the body is known to be complete.
 */
export function forEachSample(text: string, visitor: SampleVisitor, acceptUnterminatedLastLine: bool = false): void {
  const base = changetype<usize>(text);
  const length = text.length;
  const sample = new PromSample();
  sample.text = text;
  const number = new ScannedNumber();
  let lineStart = 0;
  while (lineStart < length) {
    const newline = findNewline(base, lineStart, length);
    if (newline == length && !acceptUnterminatedLastLine) return;
    let lineEnd = newline;
    if (lineEnd > lineStart && codeAt(base, lineEnd - 1) == 13 /* \r */) lineEnd--;
    if (scanSampleLine(text, base, lineStart, lineEnd, sample, number, visitor)) visitor.visit(sample);
    lineStart = newline + 1;
  }
}

/** Fills `sample` from one line (without its line break); false for comments, blanks, garbage. */
function scanSampleLine(
  text: string, base: usize, start: i32, end: i32,
  sample: PromSample, number: ScannedNumber, visitor: SampleVisitor,
): bool {
  let p = skipBlanks(base, start, end);
  if (p >= end || !isNameStart(codeAt(base, p))) return false; // blank, '#' comment, garbage
  sample.nameStart = p;
  p++;
  while (p < end && isNameChar(codeAt(base, p))) p++;
  sample.nameEnd = p;
  // No labels yet: a visitor peeking at labels in `wants` sees none rather than stale ones.
  sample.labelsStart = p;
  sample.labelsEnd = p;
  if (!visitor.wants(sample)) return false;

  p = skipBlanks(base, p, end);
  if (p < end && codeAt(base, p) == 123 /* { */) {
    const close = scanLabelBlock(base, p + 1, end);
    if (close < 0) return false;
    sample.labelsStart = p + 1;
    sample.labelsEnd = close;
    p = skipBlanks(base, close + 1, end);
  } else if (p == sample.nameEnd) {
    return false; // the name runs into something that is neither a blank nor '{'
  }

  const valueStart = p;
  while (p < end && !isBlank(codeAt(base, p))) p++;
  if (!scanNumber(text, valueStart, p, number)) return false;
  sample.value = number.value;

  // Optional timestamp, then optionally an OpenMetrics exemplar ("# {...} v"), nothing else.
  sample.hasTimestamp = false;
  p = skipBlanks(base, p, end);
  if (p < end && codeAt(base, p) != 35 /* # */) {
    const timestampStart = p;
    while (p < end && !isBlank(codeAt(base, p))) p++;
    if (!scanNumber(text, timestampStart, p, number)) return false;
    sample.timestamp = number.value;
    sample.hasTimestamp = true;
    p = skipBlanks(base, p, end);
    if (p < end && codeAt(base, p) != 35) return false;
  }
  return true;
}
