// Typed, validating access to one JSON object of the plugin configuration.
// Every problem is recorded with the full key path and what was found, e.g.
//   "lb_config.maxRequestCount must be an integer >= 0, got -3"
// and the default is used, so one pass reports the first error without ever aborting the VM.
import { JsonValue } from "../json/value";

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
  if (v.isString()) return "'" + v.str() + "'";
  if (v.isNumber()) {
    const n = v.num();
    return n == Math.floor(n) && Math.abs(n) < 1e15 ? (<i64>n).toString() : n.toString();
  }
  if (v.isBool()) return v.bool() ? "true" : "false";
  if (v.isNull()) return "null";
  if (v.isArray()) return "an array";
  return "an object";
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

  str(name: string, def: string): string {
    const v = this.value(name);
    if (v === null) return def;
    if (!v.isString()) { this.errors.add(this.key(name) + " must be a string, got " + describe(v)); return def; }
    return v.str();
  }

  /** A string from a fixed set. */
  choice(name: string, def: string, allowed: string[]): string {
    if (!this.has(name)) return def;
    const s = this.str(name, def);
    if (!allowed.includes(s)) {
      this.errors.add(this.key(name) + " must be one of " + allowed.join(", ") + ", got '" + s + "'");
      return def;
    }
    return s;
  }

  bool(name: string, def: bool): bool {
    const v = this.value(name);
    if (v === null) return def;
    if (!v.isBool()) { this.errors.add(this.key(name) + " must be true or false, got " + describe(v)); return def; }
    return v.bool();
  }

  /** Accepts integers written as numbers or as numeric strings (YAML users quote numbers). */
  int(name: string, def: i64, min: i64, max: i64): i64 {
    const v = this.value(name);
    if (v === null) return def;
    let n: f64 = NaN;
    if (v.isNumber()) n = v.num();
    else if (v.isString()) n = parseFloat(v.str());
    if (isNaN(n) || n != Math.floor(n) || n < <f64>min || n > <f64>max) {
      this.errors.add(this.key(name) + " must be an integer in [" + min.toString() + ", " + max.toString() + "], got " + describe(v));
      return def;
    }
    return <i64>n;
  }

  num(name: string, def: f64, min: f64, max: f64): f64 {
    const v = this.value(name);
    if (v === null) return def;
    let n: f64 = NaN;
    if (v.isNumber()) n = v.num();
    else if (v.isString()) n = parseFloat(v.str());
    if (isNaN(n) || n < min || n > max) {
      this.errors.add(this.key(name) + " must be a number in [" + min.toString() + ", " + max.toString() + "], got " + describe(v));
      return def;
    }
    return n;
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
      this.errors.add(this.key(name) + " must be an object, got " + describe(v));
      return new ConfigReader(null, this.key(name), this.errors);
    }
    return new ConfigReader(v, this.key(name), this.errors);
  }

  /** Reports keys this reader does not know: a typo must not silently become a default. */
  rejectUnknown(known: string[]): void {
    const o = this.obj;
    if (o === null) return;
    const keys = o.keys();
    for (let i = 0; i < keys.length; i++) {
      if (!known.includes(keys[i])) this.errors.add(this.key(keys[i]) + " is not a known key");
    }
  }
}
