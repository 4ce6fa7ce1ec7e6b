// A parsed JSON value. Every accessor is total (wrong kind -> neutral default, never a throw),
// because the plugin reads untrusted request bodies and user config on the request path.
// String values are decoded lazily from the source bytes: a 128 KB chat body is mostly message
// text that the plugin hashes as UTF-8 and never needs as an AssemblyScript string.
// rawStart/rawEnd are byte offsets of the value's own text in the source (strings include their
// quotes): Higress hashes non-string message content as its raw JSON text.
import { utf8DecodeLossy } from "../util/utf8";
import { unescapeJsonString } from "./unescape";

export enum JsonKind { Null, Bool, Number, String, Array, Object }

export class JsonValue {
  kind: JsonKind;
  /** The parsed document's bytes (shared by all values of one parse). */
  src: Uint8Array;
  rawStart: i32;
  rawEnd: i32;
  boolValue: bool = false;
  numberValue: f64 = 0;
  /** String with at least one backslash escape (decoding must unescape, not just slice). */
  hasEscapes: bool = false;
  /** Array elements, or object member values (parallel to `memberKeys`). */
  items: JsonValue[] | null = null;
  memberKeys: string[] | null = null;

  constructor(kind: JsonKind, src: Uint8Array, rawStart: i32, rawEnd: i32) {
    this.kind = kind;
    this.src = src;
    this.rawStart = rawStart;
    this.rawEnd = rawEnd;
  }

  isNull(): bool { return this.kind == JsonKind.Null; }
  isBool(): bool { return this.kind == JsonKind.Bool; }
  isNumber(): bool { return this.kind == JsonKind.Number; }
  isString(): bool { return this.kind == JsonKind.String; }
  isArray(): bool { return this.kind == JsonKind.Array; }
  isObject(): bool { return this.kind == JsonKind.Object; }

  /** Decoded string value ("" if not a string). Invalid UTF-8 becomes U+FFFD. */
  str(): string {
    if (this.kind != JsonKind.String) return "";
    if (!this.hasEscapes) return utf8DecodeLossy(this.src, this.rawStart + 1, this.rawEnd - 1);
    return utf8DecodeLossy(this.strBytes());
  }

  /**
   * Decoded string value as UTF-8 bytes (empty if not a string). Without escapes this is a view
   * of the source (no copy); bytes that are not valid UTF-8 are passed through unchanged, as Go
   * does, so hashes match Higress byte for byte.
   */
  strBytes(): Uint8Array {
    if (this.kind != JsonKind.String) return new Uint8Array(0);
    if (!this.hasEscapes) return this.src.subarray(this.rawStart + 1, this.rawEnd - 1);
    return unescapeJsonString(this.src, this.rawStart + 1, this.rawEnd - 1);
  }

  /** Number value (0 if not a number). */
  num(): f64 { return this.kind == JsonKind.Number ? this.numberValue : 0; }

  /** Bool value (false if not a bool). */
  bool(): bool { return this.kind == JsonKind.Bool ? this.boolValue : false; }

  /** Array elements (empty if not an array). The returned array is the value's own: do not mutate. */
  arr(): JsonValue[] {
    if (this.kind != JsonKind.Array) return new Array<JsonValue>(0);
    return this.items!;
  }

  /** Member count of an object, element count of an array, else 0. */
  size(): i32 {
    const items = this.items;
    return items ? items.length : 0;
  }

  /** First member named `key` of an object; null if absent or not an object. */
  get(key: string): JsonValue | null {
    if (this.kind != JsonKind.Object) return null;
    const keys = this.memberKeys!;
    for (let i = 0, n = keys.length; i < n; i++) {
      if (unchecked(keys[i]) == key) return unchecked(this.items![i]);
    }
    return null;
  }

  /** Member names of an object in document order (duplicates kept); empty if not an object. */
  keys(): string[] {
    if (this.kind != JsonKind.Object) return new Array<string>(0);
    return this.memberKeys!.slice(0);
  }

  /** The value's own JSON text as a view of the source bytes (no copy). */
  raw(): Uint8Array {
    return this.src.subarray(this.rawStart, this.rawEnd);
  }

  /** The value's own JSON text as a string. */
  rawText(): string {
    return utf8DecodeLossy(this.src, this.rawStart, this.rawEnd);
  }
}
