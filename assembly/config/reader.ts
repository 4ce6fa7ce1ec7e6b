// Typed, validating access to one JSON object of the plugin configuration.
// Every problem is recorded with the full key path and what was found, e.g.
//   "lb_config.maxRequestCount must be an integer >= 0, got -3"
// and the default is used, so one pass reports the first error without ever aborting the VM.
import { JsonValue } from "../json/value";
import { isClusterName, isDecimalText, isHeaderName, isHostName, isHostPort, isIntegerText, isKeyPrefix, tokenLength } from "./text_checks";

export class ConfigErrors {
  messages: string[] = [];
  /** Accepted but worth telling: keys Higress reads that this plugin ignores, ignored matchers. */
  warnings: string[] = [];
  add(message: string): void { this.messages.push(message); }
  warn(message: string): void { this.warnings.push(message); }
  get ok(): bool { return this.messages.length == 0; }
  first(): string { return this.messages.length > 0 ? this.messages[0] : ""; }
}

function describe(v: JsonValue): string {
  if (v.isString()) return describeText(v.str());
  if (v.isNumber()) {
    const n = v.num();
    return n == Math.floor(n) && Math.abs(n) < 1e15 ? (<i64>n).toString() : n.toString();
  }
  if (v.isBool()) return v.bool() ? "true" : "false";
  if (v.isNull()) return "null";
  if (v.isArray()) return "an array";
  return "an object";
}

function kindOf(v: JsonValue): string {
  if (v.isNumber()) return "a number";
  if (v.isBool()) return "a boolean";
  if (v.isArray()) return "an array";
  if (v.isObject()) return "an object";
  return "a string";
}

/** Text as a message shows it: control characters escaped so a CR/LF cannot split the log line. */
export function escapeControls(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c == 0x0D) out += "\\r";
    else if (c == 0x0A) out += "\\n";
    else if (c < 0x20 || c == 0x7F) out += "\\x" + (c < 16 ? "0" : "") + c.toString(16);
    else out += String.fromCharCode(c);
  }
  return out;
}

/** Characters of a value or key a message shows at most; the rest is cut and its length named. */
const SHOWN_CHARS = 64;

/** Text as a message shows it: at most SHOWN_CHARS characters (a 1 MB key must not make a 1 MB log
 *  line; a surrogate pair is never split), control characters escaped. */
export function shownText(s: string): string {
  if (s.length <= SHOWN_CHARS + 16) return escapeControls(s);
  let end = SHOWN_CHARS;
  const c = s.charCodeAt(end - 1);
  if (c >= 0xD800 && c < 0xDC00) end--;
  return escapeControls(s.substring(0, end)) + "... (" + s.length.toString() + " characters)";
}

/** A string value as the message shows it: quoted, cut, control characters escaped. */
export function describeText(s: string): string {
  return "'" + shownText(s) + "'";
}

export class ConfigReader {
  constructor(public obj: JsonValue | null, public path: string, public errors: ConfigErrors) {}

  key(name: string): string { return this.path.length > 0 ? this.path + "." + name : name; }

  has(name: string): bool {
    const o = this.obj;
    if (o === null) return false;
    const v = o.get(name);
    return v !== null && !v.isNull();
  }

  private value(name: string): JsonValue | null {
    const o = this.obj;
    if (o === null) return null;
    const v = o.get(name);
    if (v === null || v.isNull()) return null;
    return v;
  }

  /** The value of a number, boolean or choice key: "" counts as absent, as null does (gjson reads
   *  "", null and a missing key alike as 0 / false / "", and Higress takes 0 for its default; a
   *  Helm value left empty writes ""). */
  private scalar(name: string): JsonValue | null {
    const v = this.value(name);
    return v !== null && v.isString() && v.str().length == 0 ? null : v;
  }

  str(name: string, def: string): string {
    const v = this.value(name);
    if (v === null) return def;
    if (!v.isString()) { this.errors.add(this.key(name) + " must be a string, got " + describe(v)); return def; }
    return v.str();
  }

  /** A string from a fixed set; "" is the default unless `emptyIsDefault` is false (lb_policy). */
  choice(name: string, def: string, allowed: string[], emptyIsDefault: bool = true): string {
    if ((emptyIsDefault ? this.scalar(name) : this.value(name)) === null) return def;
    const s = this.str(name, def);
    if (!allowed.includes(s)) {
      this.errors.add(this.key(name) + " must be one of " + allowed.join(", ") + ", got " + describeText(s));
      return def;
    }
    return s;
  }

  /** true / false, or what Higress's gjson Bool() reads with that meaning: a string Go's ParseBool
   *  takes after lower-casing ("true", "FALSE", "t", "0"), the numbers 1 and 0. What Bool() misreads
   *  ("yes" and "on" are false there, 2 is true) is refused. */
  bool(name: string, def: bool): bool {
    const v = this.scalar(name);
    if (v === null) return def;
    if (v.isBool()) return v.bool();
    const t = v.isString() ? v.str().toLowerCase() : v.isNumber() && (v.num() == 0 || v.num() == 1) ? (v.num() == 1 ? "1" : "0") : "";
    if (t == "true" || t == "t" || t == "1") return true;
    if (t == "false" || t == "f" || t == "0") return false;
    this.errors.add(this.key(name) + " must be true or false, got " + describe(v));
    return def;
  }

  /** A number, or a string that is one the way Higress's gjson reads it (YAML users quote
   *  numbers): for an integer key digits only (Int(): "0500" is 500, "1e3" is 0), for a number key
   *  a decimal (Float(): ".5"); anything else, "3s" or "6379; FLUSHALL" included, is NaN, so a
   *  value Higress would misread is refused by name instead of read another way. */
  private numberOf(v: JsonValue, integer: bool): f64 {
    if (v.isNumber()) return v.num();
    if (!v.isString()) return NaN;
    const s = v.str();
    return (integer ? isIntegerText(s) : isDecimalText(s)) ? parseFloat(s) : NaN;
  }

  /** `unit` (e.g. "milliseconds") is named in the message, for durations. */
  int(name: string, def: i64, min: i64, max: i64, unit: string = ""): i64 {
    const v = this.scalar(name);
    if (v === null) return def;
    const n = this.numberOf(v, true);
    if (isNaN(n) || n != Math.floor(n) || n < <f64>min || n > <f64>max) {
      this.errors.add(this.key(name) + " must be an integer in [" + min.toString() + ", " + max.toString() + "]" +
        (unit.length > 0 ? " (" + unit + ")" : "") + ", got " + describe(v));
      return def;
    }
    return <i64>n;
  }

  num(name: string, def: f64, min: f64, max: f64, unit: string = ""): f64 {
    const v = this.scalar(name);
    if (v === null) return def;
    const n = this.numberOf(v, false);
    if (isNaN(n) || n < min || n > max) {
      this.errors.add(this.key(name) + " must be a number in [" + min.toString() + ", " + max.toString() + "]" +
        (unit.length > 0 ? " (" + unit + ")" : "") + ", got " + describe(v));
      return def;
    }
    return n;
  }

  /** A secret (or a header value that may be one): a wrong type is named without printing the value. */
  secret(name: string, def: string = ""): string {
    const v = this.value(name);
    if (v === null) return def;
    if (!v.isString()) {
      this.errors.add(this.key(name) + " must be a string (quote it in YAML), got " + kindOf(v) + " (value not shown)");
      return def;
    }
    return v.str();
  }

  /** An HTTP header name (RFC 9110 token), lower-cased; "" passes only when `allowEmpty` (the
   *  caller reads it as "off" or "the default"). Upper case works in Envoy (the ABI's header calls
   *  key by Http::LowerCaseString, envoy-1.27 context.cc), a non-token fails every request there
   *  (HeaderUtility::checkValidRequestHeaders in the upstream codec: 503 "invalid header name").
   *  A refusal shows the text up to the first character not allowed and that character: a header
   *  line pasted in ("Authorization: Bearer ...") must not print its value. */
  headerName(name: string, def: string, allowEmpty: bool): string {
    const s = this.str(name, def);
    if ((s.length == 0 && allowEmpty) || isHeaderName(s)) return s.toLowerCase();
    const bad = tokenLength(s);
    let got = describeText(s.substring(0, bad));
    if (bad < s.length) got += " followed by " + describeText(s.charAt(bad)) + (bad + 1 < s.length ? " (the rest not shown)" : "");
    this.errors.add(this.key(name) + " must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~), got " + got);
    return def;
  }

  /** A header name where "" (or no value) means `def`, as Higress reads cluster_header and hash_header. */
  headerNameOrDefault(name: string, def: string): string {
    return this.str(name, "").length == 0 ? def : this.headerName(name, def, false);
  }

  /** Refuses `value`, read from `key`, unless it is an Envoy cluster name (no control characters). */
  checkClusterName(key: string, value: string): bool {
    if (isClusterName(value)) return true;
    this.errors.add(key + " must be an Envoy cluster name (no control characters), got " + describeText(value));
    return false;
  }

  /** Refuses `value`, read from `key`, unless it can start every Redis key inside a hash tag. */
  checkKeyPrefix(key: string, value: string): void {
    if (isKeyPrefix(value)) return;
    this.errors.add(key + " must be non-empty without '{', '}', spaces or control characters (it is inside every key's hash tag), got " + describeText(value));
  }

  /** A DNS host name (the Redis service FQDN, e.g. redis.static). */
  hostName(name: string): string {
    const s = this.str(name, "");
    if (s.length == 0 || isHostName(s)) return s;
    this.errors.add(this.key(name) + " must be a host name such as redis.static, got " + describeText(s));
    return "";
  }

  /** A list of `ip:port` / `host:port` strings. */
  hostPortList(name: string): string[] {
    const items = this.strList(name);
    const out = new Array<string>();
    for (let i = 0; i < items.length; i++) {
      if (isHostPort(items[i])) out.push(items[i]);
      else this.errors.add(this.key(name) + "[" + i.toString() + "] must be ip:port or host:port, got " + describeText(items[i]));
    }
    return out;
  }

  strList(name: string): string[] {
    const out = new Array<string>();
    const v = this.value(name);
    if (v === null) return out;
    if (!v.isArray()) { this.errors.add(this.key(name) + " must be a list of strings, got " + describe(v)); return out; }
    const items = v.arr();
    for (let i = 0; i < items.length; i++) {
      if (!items[i].isString()) {
        this.errors.add(this.key(name) + "[" + i.toString() + "] must be a string, got " + describe(items[i]));
        continue;
      }
      out.push(items[i].str());
    }
    return out;
  }

  /** A `_match_*_` value the way Higress's SDK reads it: a list of strings, or one string for a
   *  one-element list; `dropEmpty` leaves out "" entries (routes, services, route prefixes). */
  matchList(name: string, dropEmpty: bool): string[] {
    const v = this.value(name);
    const out = new Array<string>();
    if (v !== null && v.isString()) {
      if (!dropEmpty || v.str().length > 0) out.push(v.str());
      return out;
    }
    const items = this.strList(name);
    for (let i = 0; i < items.length; i++) if (!dropEmpty || items[i].length > 0) out.push(items[i]);
    return out;
  }

  /** A nested object (absent -> a reader over nothing, so every key takes its default). */
  child(name: string): ConfigReader {
    const v = this.value(name);
    if (v !== null && !v.isObject()) {
      // A string here may be the whole object written as text, password included: not shown.
      this.errors.add(this.key(name) + " must be an object, got " + (v.isString() ? "a string (value not shown)" : describe(v)));
      return new ConfigReader(null, this.key(name), this.errors);
    }
    return new ConfigReader(v, this.key(name), this.errors);
  }

  /** Reports keys this reader does not know (a typo must not silently become a default) and keys
   *  written twice: gjson's Get() reads the first, its Map() (the SDK's `_rules_`) the last, so
   *  which one was meant is a guess (Higress's WasmPlugin config, a protobuf Struct, has none). */
  rejectUnknown(known: string[]): void {
    const o = this.obj;
    if (o === null) return;
    const keys = o.keys();
    const seen = new Set<string>();
    for (let i = 0; i < keys.length; i++) {
      if (seen.has(keys[i])) this.errors.add(this.key(shownText(keys[i])) + " appears more than once");
      seen.add(keys[i]);
      if (!known.includes(keys[i])) this.errors.add(this.key(shownText(keys[i])) + " is not a known key");
    }
  }
}
