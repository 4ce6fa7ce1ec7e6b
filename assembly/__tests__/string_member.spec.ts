// Specs of json/string_member.ts: for any input it either answers null (not its shape) or exactly
// what parseJson + JsonValue.get(key).strBytes() give; and it does answer for Higress's shape.
import { stringMemberInto } from "../json/string_member";
import { ScratchBytes } from "../json/unescape";
import { parseJson } from "../json/parse";
import { bytesToHexUpper } from "../util/hex";
import { utf8Encode } from "../util/utf8";
import { Xorshift } from "../util/prng";

const scratch = new ScratchBytes();

/** What the full parser says: hex of the member's bytes, "" when absent, null when not a string
 *  member of a valid object. */
function reference(src: Uint8Array, key: string): string | null {
  const r = parseJson(src);
  const root = r.value;
  if (!r.ok || root === null || !root.isObject()) return null;
  const v = root.get(key);
  if (v === null) return "";
  if (!v.isString()) return null;
  return bytesToHexUpper(v.strBytes());
}

/** Checks the contract on `src`; returns whether the fast path answered. */
function check(src: Uint8Array, key: string = "metrics"): bool {
  const fast = stringMemberInto(src, key, scratch);
  if (fast === null) return false;
  const ref = reference(src, key);
  expect(ref).not.toBeNull(bytesToHexUpper(src));
  if (ref !== null) expect(bytesToHexUpper(fast)).toBe(ref, bytesToHexUpper(src));
  return true;
}

function checkText(text: string, key: string = "metrics"): bool {
  return check(utf8Encode(text), key);
}

describe("stringMemberInto", () => {
  it("answers for Higress's health-check value, escapes decoded", () => {
    expect(checkText("{\"health_status\":\"Healthy\",\"metrics\":\"a{x=\\\"1\\\"} 2\\n# HELP \\u00e9 \\ud83d\\ude00\\n\"}")).toBe(true);
    expect(checkText(" { \"metrics\" : \"\" , \"health_status\" : \"Unhealthy\" } ")).toBe(true);
    expect(checkText("{\"health_status\":\"Healthy\"}")).toBe(true);
    expect(checkText("{}")).toBe(true);
    const v = stringMemberInto(utf8Encode("{\"metrics\":\"a\\nb\\\"c\"}"), "metrics", scratch);
    expect(v).not.toBeNull();
    expect(String.UTF8.decode(v!.slice().buffer)).toBe("a\nb\"c");
  });

  it("the first of duplicate members wins, as in parseJson", () => {
    expect(checkText("{\"metrics\":\"one\",\"metrics\":\"two\"}")).toBe(true);
    const v = stringMemberInto(utf8Encode("{\"metrics\":\"one\",\"metrics\":\"two\"}"), "metrics", scratch);
    expect(v!.length).toBe(3);
  });

  it("gjson's surrogate rules, as unescapeInto", () => {
    expect(checkText("{\"metrics\":\"\\ud83d\\u0041|\\udc00x|\\ud83d\"}")).toBe(true);
  });

  it("leaves other shapes and every invalid input to parseJson", () => {
    const others: string[] = [
      "{\"metrics\":1}", "{\"metrics\":\"a\",\"n\":null}", "{\"m\\u0065trics\":\"a\"}", "[\"metrics\"]",
      "{\"metrics\":\"a\\x\"}", "{\"metrics\":\"a\\u12\"}", "{\"metrics\":\"a\tb\"}", "{\"metrics\":\"a\"} x",
      "{\"metrics\":\"a\"", "{\"metrics\" \"a\"}", "{\"metrics\":\"a\",}", "", "   ", "{\"metrics\":\"a\\",
    ];
    for (let i = 0; i < others.length; i++) {
      expect(checkText(others[i])).toBe(false, others[i]);
    }
  });

  it("random mutations of a Higress value keep the contract", () => {
    const base = utf8Encode("{\"health_status\":\"Healthy\",\"metrics\":\"vllm:a{model_name=\\\"m\\\",le=\\\"+Inf\\\"} 1.5\\nb 2\\u00e9\\ud83d\\ude00\\\\ \\/\\t\\n\"}");
    const bytesPool: u8[] = [0x22, 0x5C, 0x75, 0x30, 0x64, 0x38, 0x7B, 0x7D, 0x2C, 0x3A, 0x20, 0x0A, 0x09, 0x01, 0xC3, 0xFF, 0x6E, 0x41];
    const rng = new Xorshift(12345);
    let answered = 0;
    for (let round = 0; round < 3000; round++) {
      const b = base.slice();
      const edits = 1 + <i32>(rng.next() % 3);
      for (let e = 0; e < edits; e++) {
        const at = <i32>(rng.next() % <u64>b.length);
        b[at] = bytesPool[<i32>(rng.next() % <u64>bytesPool.length)];
      }
      if (check(b)) answered++;
    }
    // Most single-byte edits land in string text: the fast path must still answer those.
    expect(answered).toBeGreaterThan(500);
  });
});
