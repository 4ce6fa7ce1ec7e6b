// Pure checks for configuration text: is a string exactly a number, an HTTP header name, a host,
// a host:port, an Envoy cluster name. Each returns false rather than guessing, so the caller refuses the key by name.

import { isDigit, isLetter, isMetricNameChar, isMetricNameStart } from "../util/ascii";

/** Where an optional exponent (e / E, an optional sign, digits) starting at `i` ends; -1 for an
 *  exponent without digits. Shared by the JSON and the decimal number checks. */
function afterExponent(s: string, i: i32): i32 {
  const n = s.length;
  if (i >= n || (s.charCodeAt(i) != 0x65 && s.charCodeAt(i) != 0x45)) return i;
  i++;
  if (i < n && (s.charCodeAt(i) == 0x2B || s.charCodeAt(i) == 0x2D)) i++;
  const start = i;
  while (i < n && isDigit(s.charCodeAt(i))) i++;
  return i == start ? -1 : i;
}

/** The whole string is one JSON number (RFC 8259 grammar: no spaces, units or trailing text),
 *  so "6379" and "0.6" pass and "3s", "10abc", "6379; FLUSHALL", " 1", "0x10" do not. */
export function isNumberText(s: string): bool {
  const n = s.length;
  let i = 0;
  if (i < n && s.charCodeAt(i) == 0x2D) i++;
  if (i >= n || !isDigit(s.charCodeAt(i))) return false;
  if (s.charCodeAt(i) == 0x30) i++;
  else while (i < n && isDigit(s.charCodeAt(i))) i++;
  if (i < n && s.charCodeAt(i) == 0x2E) {
    i++;
    const start = i;
    while (i < n && isDigit(s.charCodeAt(i))) i++;
    if (i == start) return false;
  }
  return afterExponent(s, i) == n;
}

/** What gjson v1.18.0's Int() reads from a string (parseInt): an optional '-', then digits only
 *  (leading zeros allowed), so "6379" and "0500" pass and "1e3", "10.0", "+5", " 5" do not (gjson
 *  reads those as 0, which Higress takes for the default). */
export function isIntegerText(s: string): bool {
  const n = s.length;
  let i = n > 0 && s.charCodeAt(0) == 0x2D ? 1 : 0;
  if (i >= n) return false;
  for (; i < n; i++) if (!isDigit(s.charCodeAt(i))) return false;
  return true;
}

/** What Go's strconv.ParseFloat reads from a string in decimal (gjson's Float()): an optional sign,
 *  digits with an optional '.' (".5" and "5." included), an optional exponent; NaN, infinities,
 *  hex and '_' separators are not numbers here. */
export function isDecimalText(s: string): bool {
  const n = s.length;
  let i = 0;
  if (i < n && (s.charCodeAt(i) == 0x2B || s.charCodeAt(i) == 0x2D)) i++;
  let digits = 0;
  while (i < n && isDigit(s.charCodeAt(i))) { i++; digits++; }
  if (i < n && s.charCodeAt(i) == 0x2E) {
    i++;
    while (i < n && isDigit(s.charCodeAt(i))) { i++; digits++; }
  }
  if (digits == 0) return false;
  return afterExponent(s, i) == n;
}

/** RFC 9110 section 5.6.2 tchar: "!#$%&'*+-.^_`|~", digits, letters. */
function isTchar(c: i32): bool {
  if (isDigit(c) || isLetter(c)) return true;
  return c == 0x21 || (c >= 0x23 && c <= 0x27) || c == 0x2A || c == 0x2B || c == 0x2D || c == 0x2E ||
    c == 0x5E || c == 0x5F || c == 0x60 || c == 0x7C || c == 0x7E;
}

/** How many characters of `s` from its start are tchars (the whole string: a token). */
export function tokenLength(s: string): i32 {
  let i = 0;
  while (i < s.length && isTchar(s.charCodeAt(i))) i++;
  return i;
}

/** A header field name: a non-empty token (no space, CR, LF, ':' or other separator). */
export function isHeaderName(s: string): bool {
  return s.length > 0 && tokenLength(s) == s.length;
}

/** A DNS host name as Kubernetes and Envoy write them: dot-separated labels of letters, digits,
 *  '-' and '_', none empty, at most 253 characters in all. */
export function isHostName(s: string): bool {
  if (s.length == 0 || s.length > 253) return false;
  let label = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c == 0x2E) {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    if (!isDigit(c) && !isLetter(c) && c != 0x2D && c != 0x5F) return false;
    if (++label > 63) return false;
  }
  return label > 0;
}

function isIPv6Text(s: string): bool {
  if (s.length < 2) return false;
  let colons = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c == 0x3A) { colons++; continue; }
    const hex = isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
    if (!hex && c != 0x2E) return false;
  }
  return colons >= 2;
}

/** `host:port` with a host name or IPv4 address, or `[ipv6]:port`; port 1-65535, digits only. */
export function isHostPort(s: string): bool {
  const colon = s.lastIndexOf(":");
  if (colon <= 0 || colon == s.length - 1) return false;
  const portText = s.substring(colon + 1);
  if (portText.length > 5) return false;
  for (let i = 0; i < portText.length; i++) if (!isDigit(portText.charCodeAt(i))) return false;
  const port = I32.parseInt(portText);
  if (port < 1 || port > 65535) return false;
  const host = s.substring(0, colon);
  if (host.startsWith("[")) return host.endsWith("]") && isIPv6Text(host.substring(1, host.length - 1));
  return isHostName(host);
}

/** A Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*), as a /metrics line starts: the
 *  characters the exposition parser reads as a name (metrics/prometheus.ts). */
export function isMetricName(s: string): bool {
  if (s.length == 0 || !isMetricNameStart(s.charCodeAt(0))) return false;
  for (let i = 1; i < s.length; i++) if (!isMetricNameChar(s.charCodeAt(i))) return false;
  return true;
}

/** A Redis key prefix: printable, no space and no '{' or '}' (it sits inside a hash tag). */
export function isKeyPrefix(s: string): bool {
  if (s.length == 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x20 || c == 0x7F || c == 0x7B || c == 0x7D) return false;
  }
  return true;
}

/** An HTTP request path: starts with '/', no space or control character. */
export function isPathText(s: string): bool {
  if (!s.startsWith("/")) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x20 || c == 0x7F) return false;
  }
  return true;
}

/** An Envoy cluster name a cluster policy writes as a header value (outbound|443||llm-a.dns) or
 *  the plugin calls: non-empty, no control character (none can be in a header value: Envoy
 *  validHeaderString, HeaderUtility::checkValidRequestHeaders; nor in a name Istio/Higress give a
 *  cluster; a CR/LF would also split a log line). */
export function isClusterName(s: string): bool {
  if (s.length == 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c == 0x7F) return false;
  }
  return true;
}
