// ASCII character classes over a character code (a UTF-16 unit of a string, or a UTF-8 byte):
// every character they admit is ASCII, so a byte >= 0x80 (part of a UTF-8 sequence) or a code unit
// above 0x7F is in none of them. Shared by the metrics scanners (metrics/) and the configuration's
// text checks (config/text_checks.ts), which sit above this layer.

// @ts-ignore: decorator
@inline export function isDigit(c: i32): bool {
  return <u32>(c - 48) < 10;
}

/** ASCII letter; `c | 0x20` folds case and cannot turn a non-ASCII code into a letter. */
// @ts-ignore: decorator
@inline export function isLetter(c: i32): bool {
  return <u32>((c | 0x20) - 97) < 26;
}

/** First character of a Prometheus metric name: [a-zA-Z_:]. */
// @ts-ignore: decorator
@inline export function isMetricNameStart(c: i32): bool {
  return isLetter(c) || c == 95 /* _ */ || c == 58 /* : */;
}

/** Later characters of a Prometheus metric name: [a-zA-Z0-9_:]. */
// @ts-ignore: decorator
@inline export function isMetricNameChar(c: i32): bool {
  return isMetricNameStart(c) || isDigit(c);
}
