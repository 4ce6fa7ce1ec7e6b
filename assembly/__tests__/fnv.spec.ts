// FNV-1a 64: published test values, UTF-8 hashing (expected values computed in Node from
// TextEncoder bytes with BigInt arithmetic), and incremental == one-shot.
import { fnv1a64, fnv1a64Hex, fnv1a64Bytes, fnv1a64Update, FNV64_OFFSET_BASIS, fnv1a32Bytes, fnv1a32Hex } from "../util/fnv";
import { utf8Encode } from "../util/utf8";

describe("fnv1a64", () => {
  it("matches the published FNV-1a 64 values", () => {
    expect(fnv1a64("")).toBe(0xCBF29CE484222325);
    expect(fnv1a64("a")).toBe(0xAF63DC4C8601EC8C);
    expect(fnv1a64("foobar")).toBe(0x85944171F73967E8);
  });
  it("hashes the UTF-8 bytes of non-ASCII text", () => {
    expect(fnv1a64Hex("h\u00E9llo \u20AC\u{1F600}")).toBe("438dc4a236db320d");
    expect(fnv1a64Hex("\uD800x")).toBe("af46b2e0782edaf6"); // lone surrogate hashed as U+FFFD
  });
  it("hex form is 16 lowercase digits, zero-padded", () => {
    expect(fnv1a64Hex("")).toBe("cbf29ce484222325");
    expect(fnv1a64Hex("foobar")).toBe("85944171f73967e8");
    expect(fnv1a64Hex("a").length).toBe(16);
  });
  it("incremental update over pieces equals one-shot", () => {
    const b = utf8Encode("route-a|outbound|8000||vllm.default.svc");
    let h = FNV64_OFFSET_BASIS;
    h = fnv1a64Update(h, b, 0, 5);
    h = fnv1a64Update(h, b, 5, 17);
    h = fnv1a64Update(h, b, 17);
    expect(h).toBe(fnv1a64Bytes(b));
    expect(h).toBe(fnv1a64("route-a|outbound|8000||vllm.default.svc"));
  });
  it("different inputs, including swapped characters, give different hashes", () => {
    expect(fnv1a64("ab")).not.toBe(fnv1a64("ba"));
    expect(fnv1a64("route-a")).not.toBe(fnv1a64("route-b"));
  });
});

describe("fnv1a32", () => {
  it("matches the published FNV-1a 32 values", () => {
    expect(fnv1a32Bytes(utf8Encode(""))).toBe(0x811C9DC5);
    expect(fnv1a32Bytes(utf8Encode("a"))).toBe(0xE40C292C);
    expect(fnv1a32Bytes(utf8Encode("foobar"))).toBe(0xBF9CF968);
  });
  it("hex form is Go's %08x: 8 lowercase digits, zero-padded", () => {
    expect(fnv1a32Hex(utf8Encode("foobar"))).toBe("bf9cf968");
    expect(fnv1a32Hex(utf8Encode("")).length).toBe(8);
  });
});
