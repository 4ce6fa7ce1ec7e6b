// Pair-map serialization against an annotated golden fixture (spec v0.2.1 "Serialized maps";
// the same layout higress-abi.md gives for proxy_get_upstream_hosts).
import { describe, expect, it } from "vitest";
import { decodePairs, encodePairs, PAIRS_MAX_BYTES, PAIRS_MAX_COUNT } from "../../host-test/abi/pairs.js";

// Two pairs: (":path" -> "/v1"), ("x" -> "").
const GOLDEN = Buffer.from([
  0x02, 0x00, 0x00, 0x00, //             N = 2 pairs (u32 LE)
  0x05, 0x00, 0x00, 0x00, //             pair 0 key length = 5
  0x03, 0x00, 0x00, 0x00, //             pair 0 value length = 3
  0x01, 0x00, 0x00, 0x00, //             pair 1 key length = 1
  0x00, 0x00, 0x00, 0x00, //             pair 1 value length = 0
  0x3a, 0x70, 0x61, 0x74, 0x68, 0x00, // ":path" NUL
  0x2f, 0x76, 0x31, 0x00, //             "/v1" NUL
  0x78, 0x00, //                         "x" NUL
  0x00, //                               "" NUL
]);

describe("pair map serde", () => {
  it("encodes to the golden bytes", () => {
    expect(encodePairs([[":path", "/v1"], ["x", ""]])).toEqual(GOLDEN);
  });

  it("decodes the golden bytes", () => {
    expect(decodePairs(GOLDEN)).toEqual([[":path", "/v1"], ["x", ""]]);
  });

  it("round-trips UTF-8 and JSON values with quotes and newlines", () => {
    const pairs: Array<[string, string]> = [["10.0.0.1:8000", JSON.stringify({ metrics: "a{b=\"c\"} 1\nd 2\n" })], ["ключ", "значение"]];
    expect(decodePairs(encodePairs(pairs))).toEqual(pairs);
  });

  it("an empty map is an empty buffer (hosts write (0, 0) for it)", () => {
    expect(encodePairs([]).length).toBe(0);
    expect(decodePairs(Buffer.alloc(0))).toEqual([]);
  });

  it("like cpp-host toPairs (src/pairs_util.cc, limits.h): no pairs for a missing NUL, bytes left over, over 1,024 pairs or over 1 MiB", () => {
    const noNul = Buffer.from(GOLDEN);
    noNul[GOLDEN.length - 1] = 0x41;
    expect(decodePairs(noNul)).toEqual([]);
    expect(decodePairs(Buffer.concat([GOLDEN, Buffer.from([0])]))).toEqual([]);
    const many = encodePairs(Array.from({ length: PAIRS_MAX_COUNT + 1 }, (_, i): [string, string] => [`k${i}`, "v"]));
    expect(decodePairs(many)).toEqual([]);
    expect(decodePairs(encodePairs(Array.from({ length: PAIRS_MAX_COUNT }, (_, i): [string, string] => [`k${i}`, "v"])))).toHaveLength(PAIRS_MAX_COUNT);
    expect(decodePairs(encodePairs([["big", "x".repeat(PAIRS_MAX_BYTES)]]))).toEqual([]);
  });

  it("a truncated buffer decodes to no pairs, like cpp-host toPairs", () => {
    expect(decodePairs(GOLDEN.subarray(0, GOLDEN.length - 3))).toEqual([]);
    expect(decodePairs(Buffer.from([0x05, 0, 0, 0]))).toEqual([]);
  });
});
