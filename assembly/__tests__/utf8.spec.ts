// UTF-8 helpers: encoding replaces lone surrogates; lossy decoding matches Node's TextDecoder
// (expected outputs below were produced by `new TextDecoder().decode(bytes)` in Node 20).
import { utf8Encode, utf8Length, utf8DecodeLossy } from "../util/utf8";
import { bytesToHexUpper, hexToBytes } from "../util/hex";

function decodeHex(hex: string): string {
  return utf8DecodeLossy(hexToBytes(hex)!);
}

describe("utf8Encode", () => {
  it("encodes 1- to 4-byte code points", () => {
    expect(bytesToHexUpper(utf8Encode("a\u00E9\u20AC\u{1F600}"))).toBe("61C3A9E282ACF09F9880");
    expect(utf8Length("a\u00E9\u20AC\u{1F600}")).toBe(10);
  });
  it("replaces a lone surrogate with EF BF BD", () => {
    expect(bytesToHexUpper(utf8Encode("\uD800x"))).toBe("EFBFBD78");
    expect(bytesToHexUpper(utf8Encode("x\uDC00"))).toBe("78EFBFBD");
  });
});

describe("utf8DecodeLossy", () => {
  it("round-trips valid text", () => {
    const s = "plain, \u00E9\u00E8, \u4E2D\u6587, \u{1F600}\u{10FFFF}";
    expect(utf8DecodeLossy(utf8Encode(s))).toBe(s);
  });
  it("decodes a slice and clamps bounds", () => {
    const b = utf8Encode("hello world");
    expect(utf8DecodeLossy(b, 6, 11)).toBe("world");
    expect(utf8DecodeLossy(b, 6, 999)).toBe("world");
    expect(utf8DecodeLossy(b, -3, 5)).toBe("hello");
    expect(utf8DecodeLossy(b, 5, 2)).toBe("");
  });
  it("replaces invalid sequences like TextDecoder", () => {
    expect(decodeHex("618062")).toBe("a\uFFFDb");
    expect(decodeHex("C0AF")).toBe("\uFFFD\uFFFD");           // overlong lead byte
    expect(decodeHex("E08080")).toBe("\uFFFD\uFFFD\uFFFD");   // overlong 3-byte
    expect(decodeHex("EDA080")).toBe("\uFFFD\uFFFD\uFFFD");   // encoded surrogate
    expect(decodeHex("F09F98")).toBe("\uFFFD");               // truncated 4-byte at end
    expect(decodeHex("F09F9880")).toBe("\u{1F600}");
    expect(decodeHex("F4908080")).toBe("\uFFFD\uFFFD\uFFFD\uFFFD"); // above U+10FFFF
    expect(decodeHex("E282")).toBe("\uFFFD");
    expect(decodeHex("E282ACFF")).toBe("\u20AC\uFFFD");
    expect(decodeHex("C3A9F841")).toBe("\u00E9\uFFFDA");
    expect(decodeHex("F0288CBC")).toBe("\uFFFD(\uFFFD\uFFFD");  // bad byte restarts decoding
  });
});
