// Streaming scanner for the Prometheus text exposition format (and the OpenMetrics subset that
// model servers print), used on vLLM / SGLang `/metrics` bodies.
// Input: the whole body as UTF-8 bytes (or a string, encoded once), and a visitor. Bytes are scanned
// in place: Higress's /metrics text arrives as bytes, and a UTF-16 copy would double the memory
// traffic of every scan. The visitor first sees only the metric name
// (`wants`); labels, value and timestamp are scanned only for the lines it wants, so a policy
// that reads five gauges pays little for the hundreds of histogram lines around them.
// Failure behaviour: never throws. Comments (`# HELP`, `# TYPE`, `# EOF`), blank lines and any
// malformed line are skipped; an unterminated last line is dropped by default because Higress
// cuts bodies at 64 KiB and a cut line can carry a wrong but well-formed value ("12" of "123").

import { codeAt, isBlank } from "./chars";
import { isDigit, isLetter, isMetricNameChar, isMetricNameStart } from "../util/ascii";
import { ScannedNumber, scanNumberAt } from "./prom_number";
import { utf8DecodeLossyAt, utf8Encode } from "../util/utf8";

// Metric names: [a-zA-Z_:][a-zA-Z0-9_:]* (util/ascii.ts isMetricNameStart / isMetricNameChar, which
// also check target_metric in the configuration); label names: [a-zA-Z_][a-zA-Z0-9_]*.

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

/** Index of the next '\n' at or after `p`, or `len`. Checks eight bytes per load. */
function findNewline(base: usize, p: i32, len: i32): i32 {
  while (p + 8 <= len) {
    const word = load<u64>(base + <usize>p) ^ 0x0A0A0A0A0A0A0A0A;
    // Standard "has a zero byte" test: a byte equal to '\n' became zero.
    const hit = (word - 0x0101010101010101) & ~word & 0x8080808080808080;
    // The lowest flagged byte is always a true '\n'.
    if (hit != 0) return p + <i32>(ctz<u64>(hit) >> 3);
    p += 8;
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
 * Offsets are byte offsets into the body (`base`, `length` bytes); accessors read it in place and
 * allocate only in `name()` and `label()`.
 */
export class PromSample {
  /** Address and byte length of the body being scanned (kept alive by forEachSample's caller). */
  base: usize = 0;
  length: i32 = 0;
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
    return utf8DecodeLossyAt(this.base + <usize>this.nameStart, this.nameEnd - this.nameStart);
  }

  nameIs(name: string): bool {
    return this.nameEnd - this.nameStart == name.length && sameAscii(this.base + <usize>this.nameStart, name);
  }

  nameStartsWith(prefix: string): bool {
    return this.nameEnd - this.nameStart >= prefix.length && sameAscii(this.base + <usize>this.nameStart, prefix);
  }

  hasLabel(key: string): bool {
    return this.seekLabel(key);
  }

  /** The unescaped value of label `key`, or "" when the label is absent. */
  label(key: string): string {
    if (!this.seekLabel(key)) return "";
    const base = this.base;
    let p = this.foundStart;
    const end = this.foundEnd;
    if (!hasBackslash(base, p, end)) return utf8DecodeLossyAt(base + <usize>p, end - p);
    // Decoded text is never longer than the raw text; one buffer avoids quadratic concatenation.
    const buffer = new Uint8Array(end - p);
    let n = 0;
    while (p < end) {
      const c = codeAt(base, p);
      if (c == 92 && p + 1 < end) {
        const escaped = codeAt(base, p + 1);
        if (escaped == 110 /* n */) {
          buffer[n++] = 10;
        } else if (escaped == 34 || escaped == 92) {
          buffer[n++] = <u8>escaped;
        } else {
          // Not an escape of the format: keep both characters rather than guess.
          buffer[n++] = 92;
          buffer[n++] = <u8>escaped;
        }
        p += 2;
      } else {
        buffer[n++] = <u8>c;
        p++;
      }
    }
    return utf8DecodeLossyAt(buffer.dataStart, n);
  }

  /** True when label `key` is present and its unescaped value equals `expected`. */
  labelIs(key: string, expected: string): bool {
    if (!this.seekLabel(key)) return false;
    const base = this.base;
    const start = this.foundStart;
    const end = this.foundEnd;
    // Escaped or non-ASCII values are rare: compare the decoded copy rather than keep a second
    // decoder here.
    if (!plainAscii(base, start, end)) return this.label(key) == expected;
    return end - start == expected.length && sameAscii(base + <usize>start, expected);
  }

  /** Model filters: a series passes when label `key` is absent or equals `expected`. */
  labelIsOrMissing(key: string, expected: string): bool {
    if (!this.seekLabel(key)) return true;
    return this.labelIs(key, expected);
  }

  private seekLabel(key: string): bool {
    const base = this.base;
    const keyLength = key.length;
    const end = this.labelsEnd;
    let p = skipBlanks(base, this.labelsStart, end);
    // The block was validated by scanLabelBlock, so this walk only needs bounds checks.
    while (p < end) {
      const nameStart = p;
      while (p < end && isLabelNameChar(codeAt(base, p))) p++;
      const matches = p - nameStart == keyLength && sameAscii(base + <usize>nameStart, key);
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

/** Whether the bytes at `p` equal the first `s.length` characters of `s` (ASCII in the bytes:
 *  a character >= 0x80 never matches, since one byte cannot equal it). */
function sameAscii(p: usize, s: string): bool {
  const n = s.length;
  const q = changetype<usize>(s);
  for (let i = 0; i < n; i++) {
    if (<u32>load<u8>(p + <usize>i) != <u32>load<u16>(q + (<usize>i << 1))) return false;
  }
  return true;
}

/** No backslash and no byte >= 0x80 in [p, end): the bytes are the decoded value. */
function plainAscii(base: usize, p: i32, end: i32): bool {
  for (; p < end; p++) {
    const c = codeAt(base, p);
    if (c == 92 || c >= 0x80) return false;
  }
  return true;
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

  /**
   * Every name `wants` can accept, or null (any name). With a list, the scanner drops a line whose
   * first eight bytes match no listed name before scanning the name at all: most lines of a vLLM
   * body are histogram buckets no policy reads. A name missing here is never seen by `wants`.
   */
  wantedNames(): string[] | null {
    return null;
  }

  visit(sample: PromSample): void {}
}

/**
 * Calls `visitor` for every well-formed sample line of `text`, in order (encodes it to UTF-8 once;
 * the plugin's callers pass bytes to forEachSampleIn).
 * `acceptUnterminatedLastLine`: set it only when the body is known to be complete.
 */
export function forEachSample(text: string, visitor: SampleVisitor, acceptUnterminatedLastLine: bool = false): void {
  const bytes = utf8Encode(text);
  forEachSampleIn(bytes, visitor, acceptUnterminatedLastLine);
}

/**
 * The first (up to) eight bytes of each name a visitor lists, as little-endian words with a mask
 * for names shorter than eight bytes: a line whose name is listed starts with one of them.
 */
class NamePrefixes {
  words: StaticArray<u64>;
  masks: StaticArray<u64>;

  constructor(names: string[]) {
    const n = names.length;
    this.words = new StaticArray<u64>(n);
    this.masks = new StaticArray<u64>(n);
    for (let i = 0; i < n; i++) {
      const name = names[i];
      const k = min(name.length, 8);
      let word: u64 = 0;
      let mask: u64 = 0;
      for (let j = 0; j < k; j++) {
        // Names the scanner accepts are ASCII: a character >= 0x80 becomes byte 0x80, which no
        // name byte equals, so the (never wanted) name stays unmatched.
        const c = name.charCodeAt(j);
        word |= <u64>(c < 0x80 ? c : 0x80) << (<u64>j << 3);
        mask |= <u64>0xFF << (<u64>j << 3);
      }
      this.words[i] = word;
      this.masks[i] = mask;
    }
  }

  /** Whether the eight bytes at the start of a name may begin a listed name. */
  mayMatch(head: u64): bool {
    const words = this.words;
    const masks = this.masks;
    for (let i = 0, n = words.length; i < n; i++) {
      if ((head & unchecked(masks[i])) == unchecked(words[i])) return true;
    }
    return false;
  }
}

/** forEachSample over UTF-8 bytes, scanned in place. */
export function forEachSampleIn(bytes: Uint8Array, visitor: SampleVisitor, acceptUnterminatedLastLine: bool = false): void {
  const base = bytes.dataStart;
  const length = bytes.length;
  const listed = visitor.wantedNames();
  const prefixes: NamePrefixes | null = listed === null ? null : new NamePrefixes(listed);
  const sample = new PromSample();
  sample.base = base;
  sample.length = length;
  const number = new ScannedNumber();
  let lineStart = 0;
  while (lineStart < length) {
    const newline = findNewline(base, lineStart, length);
    if (newline == length && !acceptUnterminatedLastLine) return;
    let lineEnd = newline;
    if (lineEnd > lineStart && codeAt(base, lineEnd - 1) == 13 /* \r */) lineEnd--;
    if (scanSampleLine(base, lineStart, lineEnd, sample, number, visitor, prefixes)) visitor.visit(sample);
    lineStart = newline + 1;
  }
}

/** Fills `sample` from one line (without its line break); false for comments, blanks, garbage. */
function scanSampleLine(
  base: usize, start: i32, end: i32,
  sample: PromSample, number: ScannedNumber, visitor: SampleVisitor, prefixes: NamePrefixes | null,
): bool {
  let p = skipBlanks(base, start, end);
  if (p >= end || !isMetricNameStart(codeAt(base, p))) return false; // blank, '#' comment, garbage
  // The eight-byte load may read past the line (into the body, never past it): a listed name
  // shorter than eight bytes is compared under its mask only, and `wants` decides exactly.
  if (prefixes !== null && <u32>p + 8 <= <u32>sample.length && !prefixes.mayMatch(load<u64>(base + <usize>p))) return false;
  sample.nameStart = p;
  p++;
  while (p < end && isMetricNameChar(codeAt(base, p))) p++;
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
  if (!scanNumberAt(base, valueStart, p, number)) return false;
  sample.value = number.value;

  // Optional timestamp, then optionally an OpenMetrics exemplar ("# {...} v"), nothing else.
  sample.hasTimestamp = false;
  p = skipBlanks(base, p, end);
  if (p < end && codeAt(base, p) != 35 /* # */) {
    const timestampStart = p;
    while (p < end && !isBlank(codeAt(base, p))) p++;
    if (!scanNumberAt(base, timestampStart, p, number)) return false;
    sample.timestamp = number.value;
    sample.hasTimestamp = true;
    p = skipBlanks(base, p, end);
    if (p < end && codeAt(base, p) != 35) return false;
  }
  return true;
}
