// JSON parser: every value kind, raw offsets of nested values, escapes, malformed inputs (each
// must return ok=false with a located message, none may trap), nesting limits, fuzzed input.
import { JSON_MAX_ENTRIES, parseJson, parseJsonString, JsonParseResult } from "../json/parse";
import { JsonValue, JsonKind } from "../json/value";
import { bytesToHexUpper, hexToBytes } from "../util/hex";
import { utf8DecodeLossy, utf8Encode } from "../util/utf8";
import { Xorshift } from "../util/prng";

function parseOk(text: string): JsonValue {
  const r = parseJsonString(text);
  if (!r.ok) {
    trace("unexpected parse error: " + r.error);
  }
  expect(r.ok).toBe(true, text);
  expect(r.error).toBe("");
  return r.value!;
}

function parseErr(text: string): JsonParseResult {
  const r = parseJsonString(text);
  expect(r.ok).toBe(false, text);
  expect(r.value).toBeNull();
  return r;
}

function expectError(text: string, message: string, offset: i32): void {
  const r = parseErr(text);
  expect(r.error).toBe(message, text);
  expect(r.errorOffset).toBe(offset, text);
}

describe("json: values of every kind", () => {
  it("literals", () => {
    expect(parseOk("null").isNull()).toBe(true);
    expect(parseOk("true").bool()).toBe(true);
    const f = parseOk(" false ");
    expect(f.isBool()).toBe(true);
    expect(f.bool()).toBe(false);
    expect(f.rawStart).toBe(1);
    expect(f.rawEnd).toBe(6);
  });
  it("numbers: integers, fractions, exponents, big and tiny", () => {
    expect(parseOk("0").num()).toBe(0.0);
    expect(parseOk("-0").num()).toBe(-0.0);
    expect(parseOk("42").num()).toBe(42.0);
    expect(parseOk("-17").num()).toBe(-17.0);
    expect(parseOk("3.25").num()).toBe(3.25);
    expect(parseOk("-12.5e3").num()).toBe(-12500.0);
    expect(parseOk("1E+2").num()).toBe(100.0);
    expect(parseOk("25e-1").num()).toBe(2.5);
    expect(parseOk("0.1").num()).toBe(0.1);
    expect(parseOk("1e-7").num()).toBe(1e-7);
    expect(parseOk("9007199254740993").num()).toBe(9007199254740992.0); // rounds to nearest even
    expect(parseOk("123456789012345678901234567890").num()).toBe(1.2345678901234568e29);
    expect(parseOk("1e400").num()).toBe(Infinity);
    const n = parseOk("[ 1.5e3 ]").arr()[0];
    expect(n.isNumber()).toBe(true);
    expect(n.rawText()).toBe("1.5e3");
  });
  it("strings", () => {
    const s = parseOk("\"hello\"");
    expect(s.isString()).toBe(true);
    expect(s.str()).toBe("hello");
    expect(s.rawStart).toBe(0);
    expect(s.rawEnd).toBe(7);
    expect(parseOk("\"\"").str()).toBe("");
    expect(parseOk("\"h\u00E9llo \u4E2D\u{1F600}\"").str()).toBe("h\u00E9llo \u4E2D\u{1F600}");
  });
  it("arrays", () => {
    expect(parseOk("[]").arr().length).toBe(0);
    expect(parseOk("[ ]").isArray()).toBe(true);
    const a = parseOk("[1, \"two\", [3], {\"four\": 4}, null, true]");
    const items = a.arr();
    expect(items.length).toBe(6);
    expect(a.size()).toBe(6);
    expect(items[0].num()).toBe(1.0);
    expect(items[1].str()).toBe("two");
    expect(items[2].arr()[0].num()).toBe(3.0);
    expect(items[3].get("four")!.num()).toBe(4.0);
    expect(items[4].kind).toBe(JsonKind.Null);
    expect(items[5].bool()).toBe(true);
  });
  it("objects: lookup, key order, duplicates keep the first match", () => {
    expect(parseOk("{}").keys().length).toBe(0);
    const o = parseOk("{\"b\": 1, \"a\": {\"x\": \"y\"}, \"b\": 2}");
    expect(o.isObject()).toBe(true);
    const keys = o.keys();
    expect(keys.length).toBe(3);
    expect(keys[0]).toBe("b");
    expect(keys[1]).toBe("a");
    expect(keys[2]).toBe("b");
    expect(o.get("b")!.num()).toBe(1.0);
    expect(o.get("a")!.get("x")!.str()).toBe("y");
    expect(o.get("missing")).toBeNull();
  });
  it("accessors on the wrong kind return neutral values", () => {
    const n = parseOk("5");
    expect(n.str()).toBe("");
    expect(n.strBytes().length).toBe(0);
    expect(n.bool()).toBe(false);
    expect(n.arr().length).toBe(0);
    expect(n.keys().length).toBe(0);
    expect(n.get("x")).toBeNull();
    expect(n.size()).toBe(0);
    const s = parseOk("\"5\"");
    expect(s.num()).toBe(0.0);
    expect(parseOk("[1]").get("0")).toBeNull();
    expect(parseOk("{\"a\":1}").arr().length).toBe(0);
  });
  it("whitespace of all four kinds is skipped", () => {
    const v = parseOk("\t\r\n {\n\t\"a\"\r:\n[ 1 ,\t2 ]\r\n}\n ");
    expect(v.get("a")!.arr().length).toBe(2);
  });
});

describe("json: raw offsets", () => {
  it("rawStart/rawEnd of nested values cover their exact text", () => {
    const text = "{\"model\": \"m\", \"messages\": [ {\"role\":\"user\", \"content\": [ {\"type\": \"text\", \"text\": \"hi\"} ] }, {\"role\":\"assistant\",\"content\":null} ]}";
    const doc = parseOk(text);
    expect(doc.rawStart).toBe(0);
    expect(doc.rawEnd).toBe(text.length);
    const messages = doc.get("messages")!;
    expect(messages.rawText()).toBe(text.substring(messages.rawStart, messages.rawEnd));
    expect(text.charAt(messages.rawStart)).toBe("[");
    expect(text.charAt(messages.rawEnd - 1)).toBe("]");
    const content = messages.arr()[0].get("content")!;
    expect(content.rawText()).toBe("[ {\"type\": \"text\", \"text\": \"hi\"} ]");
    const part = content.arr()[0];
    expect(part.rawText()).toBe("{\"type\": \"text\", \"text\": \"hi\"}");
    expect(part.get("text")!.rawText()).toBe("\"hi\"");
    expect(messages.arr()[1].get("content")!.rawText()).toBe("null");
    expect(doc.get("model")!.rawStart).toBe(10);
    expect(doc.get("model")!.rawEnd).toBe(13);
  });
  it("raw() is a view of the source bytes", () => {
    const v = parseOk("[10, {\"k\": [true]}]").arr()[1];
    expect(bytesToHexUpper(v.raw())).toBe(bytesToHexUpper(utf8Encode("{\"k\": [true]}")));
  });
  it("offsets are UTF-8 byte offsets", () => {
    const v = parseOk("{\"\u00E9\u20AC\": \"x\"}");
    const x = v.get("\u00E9\u20AC")!;
    expect(x.rawStart).toBe(10); // { " C3 A9 E2 82 AC " : space
    expect(x.rawEnd).toBe(13);
  });
});

describe("json: string escapes", () => {
  it("simple escapes", () => {
    const v = parseOk("\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t\"");
    expect(v.str()).toBe("q\" b\\ s/ \b\f\n\r\t");
    expect(v.hasEscapes).toBe(true);
  });
  it("\\u escapes of 1, 2 and 3 UTF-8 bytes, either hex case", () => {
    expect(parseOk("\"\\u0041\\u00e9\\u20AC\\u4e2D\"").str()).toBe("A\u00E9\u20AC\u4E2D");
    expect(bytesToHexUpper(parseOk("\"\\u0000\"").strBytes())).toBe("00");
  });
  it("surrogate pairs combine into one code point", () => {
    const v = parseOk("\"\\ud83d\\ude00!\"");
    expect(v.str()).toBe("\u{1F600}!");
    expect(bytesToHexUpper(v.strBytes())).toBe("F09F988021");
  });
  it("lone surrogates become U+FFFD; a surrogate swallows the next \\u escape (gjson v1.18.0)", () => {
    expect(bytesToHexUpper(parseOk("\"\\ud800\"").strBytes())).toBe("EFBFBD");
    expect(bytesToHexUpper(parseOk("\"\\udc00x\"").strBytes())).toBe("EFBFBD78");
    // gjson's unescape: utf16.DecodeRune(high, next unit) is U+FFFD for a non-low unit, and both
    // units are consumed (Go's encoding/json would keep the "A").
    expect(parseOk("\"\\ud800\\u0041\"").str()).toBe("\uFFFD");
    expect(parseOk("\"\\ud800\\u0041B\"").str()).toBe("\uFFFDB");
    expect(parseOk("\"\\udc00\\udc00\"").str()).toBe("\uFFFD");
    expect(parseOk("\"\\ud800\\ud800\\udc00\"").str()).toBe("\uFFFD\uFFFD");
    // Only a \\u escape is swallowed: \\n after a surrogate stays.
    expect(parseOk("\"\\ud800\\n\"").str()).toBe("\uFFFD\n");
  });
  it("escaped member names are decoded for lookup", () => {
    const v = parseOk("{\"a\\u0062\\n\": 1}");
    expect(v.keys()[0]).toBe("ab\n");
    expect(v.get("ab\n")!.num()).toBe(1.0);
  });
  it("escapes and quotes at every position around the 8-byte fast path", () => {
    for (let len = 0; len < 20; len++) {
      for (let at = 0; at <= len; at++) {
        let text = "\"";
        let expected = "";
        for (let i = 0; i < len; i++) {
          if (i == at) { text += "\\\""; expected += "\""; }
          text += "x";
          expected += "x";
        }
        if (at == len) { text += "\\n"; expected += "\n"; }
        text += "\"";
        const r = parseJsonString("[" + text + ",1]");
        if (!r.ok || r.value!.arr()[0].str() != expected || r.value!.arr()[1].num() != 1.0) {
          expect(text).toBe("parsed correctly");
        }
      }
    }
  });
  it("invalid UTF-8 is tolerated: bytes pass through, str() shows U+FFFD", () => {
    const bytes = hexToBytes("5B2261FF62C322205D")!; // ["a\xFFb\xC3" ]
    const r = parseJson(bytes);
    expect(r.ok).toBe(true);
    const s = r.value!.arr()[0];
    expect(bytesToHexUpper(s.strBytes())).toBe("61FF62C3");
    expect(s.str()).toBe("a\uFFFDb\uFFFD");
  });
  it("str() of escaped text equals the UTF-8 path (one-pass ASCII decoder vs strBytes + decode)", () => {
    const rng = new Xorshift(77);
    const pieces = ["a", "bc", "\\n", "\\\"", "\\\\", "\\/", "\\t", "\\u0041", "\\u00e9", "\\u4e2d", "\\ud83d\\ude00",
      "\\ud83d\\u0041", "\\udc00", "\\ud800", "x y z 0123", "\u00e9", "\u4e2d", "\\b\\f\\r"];
    for (let round = 0; round < 400; round++) {
      let text = "";
      const n = <i32>(rng.next() % 40);
      for (let k = 0; k < n; k++) text += pieces[<i32>(rng.next() % <u64>pieces.length)];
      const v = parseOk("\"" + text + "\"");
      const slow = utf8DecodeLossy(v.strBytes());
      if (v.str() != slow) expect(text).toBe("decoded the same both ways");
    }
  });
  it("strBytes of an unescaped string is a view, with escapes a decoded copy", () => {
    const r = parseJsonString("[\"abc\", \"a\\tc\"]");
    const items = r.value!.arr();
    expect(items[0].strBytes().dataStart).toBe(items[0].src.dataStart + 2);
    expect(bytesToHexUpper(items[1].strBytes())).toBe("610963");
  });
});

describe("json: strLength", () => {
  it("is str().length for ASCII, escapes of every kind, non-ASCII, invalid UTF-8 and non-strings", () => {
    const texts: string[] = ["\"\"", "\"plain ascii text, longer than a word\"", "\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t end of it\"",
      "\"line one\\nline two\\n\\tindented\"", "\"\\u0041\\u00e9\\u20AC\\u4e2D\"", "\"\\ud83d\\ude00!\"", "\"\\ud83d alone\"",
      "\"caf\u00e9 \u4e2d\u6587 and \u{1F600} emoji\"", "\"mixed\\n caf\u00e9\\t\"", "12.5", "[1,2]", "{\"a\":1}", "null"];
    for (let i = 0; i < texts.length; i++) {
      const v = parseOk(texts[i]);
      expect(v.strLength()).toBe(v.str().length, texts[i]);
    }
  });
  it("counts invalid UTF-8 as str() decodes it (one U+FFFD per invalid sequence)", () => {
    const bytes = new Uint8Array(8);
    bytes[0] = 0x22; bytes[1] = 0x61; bytes[2] = 0xFF; bytes[3] = 0xE2; bytes[4] = 0x82; bytes[5] = 0x5C; bytes[6] = 0x6E; bytes[7] = 0x22;
    const v = parseJson(bytes).value!;
    expect(v.strLength()).toBe(v.str().length);
  });
});

describe("json: malformed input", () => {
  it("reports what was expected and where", () => {
    expectError("", "unexpected end of input, expected a value at offset 0", 0);
    expectError("   ", "unexpected end of input, expected a value at offset 3", 3);
    expectError("{\"a\" 1}", "expected ':', got '1' at offset 5", 5);
    expectError("{\"model\": \"x\", \"n\" 1}", "expected ':', got '1' at offset 19", 19);
    expectError("{\"a\":1,}", "expected '\"', got '}' at offset 7", 7);
    expectError("{\"a\":1 \"b\":2}", "expected ',' or '}', got '\"' at offset 7", 7);
    expectError("{1:2}", "expected '\"' or '}', got '1' at offset 1", 1);
    expectError("{'a':1}", "expected '\"' or '}', got ''' at offset 1", 1);
    expectError("{", "unexpected end of input, expected '\"' or '}' at offset 1", 1);
    expectError("{\"a\"", "unexpected end of input, expected ':' at offset 4", 4);
    expectError("{\"a\":", "unexpected end of input, expected a value at offset 5", 5);
    expectError("{\"a\":1", "unexpected end of input, expected ',' or '}' at offset 6", 6);
    expectError("[1,]", "unexpected ']', expected a value at offset 3", 3);
    expectError("[1 2]", "expected ',' or ']', got '2' at offset 3", 3);
    expectError("[1,2", "unexpected end of input, expected ',' or ']' at offset 4", 4);
    expectError("[", "unexpected end of input, expected a value at offset 1", 1);
    expectError("]", "unexpected ']', expected a value at offset 0", 0);
  });
  it("strings", () => {
    expectError("\"abc", "unterminated string starting at offset 0", 0);
    expectError("[\"abcdefghijklmnop", "unterminated string starting at offset 1", 1);
    expectError("\"abc\\", "unterminated string starting at offset 0", 0);
    expectError("\"\\u12", "unterminated string starting at offset 0", 0);
    expectError("\"a\\x\"", "invalid escape \\x at offset 2", 2);
    expectError("\"\\u12G4\"", "invalid \\u escape at offset 1", 1);
    expectError("\"a\nb\"", "unescaped control character byte 0x0A in string at offset 2", 2);
    expectError("\"a\u0000b\"", "unescaped control character byte 0x00 in string at offset 2", 2);
  });
  it("literals and numbers", () => {
    expectError("tru", "unexpected end of input in literal 'true' at offset 3", 3);
    expectError("trux", "invalid literal, expected 'true' at offset 0", 0);
    expectError("[nul]", "invalid literal, expected 'null' at offset 1", 1);
    expectError("fals", "unexpected end of input in literal 'false' at offset 4", 4);
    expectError("NaN", "unexpected 'N', expected a value at offset 0", 0);
    expectError("Infinity", "unexpected 'I', expected a value at offset 0", 0);
    expectError("+1", "unexpected '+', expected a value at offset 0", 0);
    expectError(".5", "unexpected '.', expected a value at offset 0", 0);
    expectError("-", "unexpected end of input in number at offset 1", 1);
    expectError("-a", "invalid number, expected a digit at offset 1", 1);
    expectError("1.", "unexpected end of input in number at offset 2", 2);
    expectError("1.e5", "invalid number, expected a digit after '.' at offset 2", 2);
    expectError("1e", "unexpected end of input in number at offset 2", 2);
    expectError("1e+", "unexpected end of input in number at offset 3", 3);
    expectError("[1ex]", "invalid number, expected an exponent digit at offset 3", 3);
    expectError("01", "unexpected trailing '1' after the document at offset 1", 1);
  });
  it("trailing garbage after a complete document", () => {
    expectError("{\"a\":1}x", "unexpected trailing 'x' after the document at offset 7", 7);
    expectError("[] []", "unexpected trailing '[' after the document at offset 3", 3);
    expectError("1 2", "unexpected trailing '2' after the document at offset 2", 2);
    expectError("null\u0001", "unexpected trailing byte 0x01 after the document at offset 4", 4);
  });
  it("every proper prefix of a document is an error located inside the prefix", () => {
    const text = "{\"a\": [1, 2.5e1, {\"b\": \"c\\u00e9\"}], \"d\": true, \"e\": null}";
    const bytes = utf8Encode(text);
    for (let cut = 0; cut < bytes.length; cut++) {
      const r = parseJson(bytes.subarray(0, cut));
      if (r.ok || r.errorOffset < 0 || r.errorOffset > cut || !r.error.includes(" at offset ")) {
        expect(cut).toBe(-1, "prefix of length " + cut.toString() + ": " + r.error);
      }
    }
    expect(parseJson(bytes).ok).toBe(true);
  });
  it("random bytes and mutated documents never trap", () => {
    const rng = new Xorshift(2024);
    const alphabet = utf8Encode("{}[]\":,\\u0123456789abcdefABCDEFtrueflsn.-+eE \n\t\u00E9");
    const base = utf8Encode("{\"messages\":[{\"role\":\"user\",\"content\":\"hi \\u00e9\"},{\"n\":-1.5e3}]}");
    let failures = 0;
    let badErrors = 0;
    for (let round = 0; round < 3000; round++) {
      let bytes: Uint8Array;
      if (round & 1) {
        const len = <i32>rng.nextBelow(40);
        bytes = new Uint8Array(len);
        for (let i = 0; i < len; i++) {
          bytes[i] = round % 4 == 1 ? <u8>rng.nextBelow(256) : alphabet[rng.nextBelow(alphabet.length)];
        }
      } else {
        bytes = base.slice(0);
        const edits: u32 = rng.nextBelow(3) + 1;
        for (let e: u32 = 0; e < edits; e++) bytes[rng.nextBelow(bytes.length)] = alphabet[rng.nextBelow(alphabet.length)];
      }
      const r = parseJson(bytes);
      if (!r.ok) {
        failures++;
        if (r.error.length == 0 || r.errorOffset < 0 || r.errorOffset > bytes.length) badErrors++;
      }
    }
    expect(badErrors).toBe(0);
    expect(failures).toBeGreaterThan(1000); // the generator does produce malformed input
  });
});

describe("json: nesting depth", () => {
  it("64 levels parse by default, 65 are an error", () => {
    expect(parseJsonString("[".repeat(64) + "]".repeat(64)).ok).toBe(true);
    expectError("[".repeat(65) + "]".repeat(65), "nesting deeper than 64 at offset 64", 64);
    const objects = "{\"a\":".repeat(65) + "1" + "}".repeat(65);
    const r = parseErr(objects);
    expect(r.error.startsWith("nesting deeper than 64")).toBe(true);
  });
  it("the limit is configurable", () => {
    expect(parseJsonString("[[[1]]]", 3).ok).toBe(true);
    const r = parseJsonString("[[[[1]]]]", 3);
    expect(r.ok).toBe(false);
    expect(r.error).toBe("nesting deeper than 3 at offset 3");
    expect(parseJsonString("[{\"a\":[1]}]", 2).ok).toBe(false);
  });
  it("100,000 opening brackets fail fast without exhausting the stack", () => {
    const r = parseErr("[".repeat(100000));
    expect(r.errorOffset).toBe(64);
  });
});

describe("json: large bodies", () => {
  it("a 200 KB chat body parses and its content decodes exactly", () => {
    const filler = "The quick brown fox jumps over the lazy dog. ".repeat(4600);
    const body = "{\"model\":\"llama\",\"messages\":[{\"role\":\"system\",\"content\":\"" + filler +
      "\"},{\"role\":\"user\",\"content\":\"line1\\nline2 \\u4e2d\"}],\"stream\":true}";
    const r = parseJsonString(body);
    expect(r.ok).toBe(true);
    const messages = r.value!.get("messages")!.arr();
    expect(messages[0].get("content")!.strBytes().length).toBe(filler.length);
    expect(messages[0].get("content")!.str() == filler).toBe(true);
    expect(messages[1].get("content")!.str()).toBe("line1\nline2 \u4E2D");
    expect(r.value!.get("stream")!.bool()).toBe(true);
  });
});

describe("parseJson's bound on values", () => {
  it("refuses a document of more values than maxEntries (member names count), at the value past the bound", () => {
    const ok = parseJson(utf8Encode("[1,2,3]"), 64, 4);
    expect(ok.ok).toBe(true);
    const over = parseJson(utf8Encode("[1,2,3,4]"), 64, 4);
    expect(over.ok).toBe(false);
    expect(over.error.includes("more than 4 values")).toBe(true);
    expect(parseJson(utf8Encode('{"a":1,"b":2}'), 64, 4).ok).toBe(false);
    expect(parseJson(utf8Encode('{"a":1}'), 64, 4).ok).toBe(true);
  });
  it("defaults to JSON_MAX_ENTRIES: 4 Mi, a 64 MiB tape", () => {
    expect(JSON_MAX_ENTRIES).toBe(4194304);
  });
});
