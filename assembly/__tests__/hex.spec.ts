// Hex encoding/decoding and XOR: round trips, rejection of bad input, XOR algebra.
import { bytesToHexUpper, hexToBytes, xorInto, u64ToHexLower } from "../util/hex";

function bytesOf(values: i32[]): Uint8Array {
  const b = new Uint8Array(values.length);
  for (let i = 0; i < values.length; i++) b[i] = <u8>values[i];
  return b;
}

describe("bytesToHexUpper", () => {
  it("encodes every byte value as two uppercase digits", () => {
    const all = new Uint8Array(256);
    for (let i = 0; i < 256; i++) all[i] = <u8>i;
    const hex = bytesToHexUpper(all);
    expect(hex.length).toBe(512);
    expect(hex.substring(0, 8)).toBe("00010203");
    expect(hex.substring(18, 24)).toBe("090A0B");
    expect(hex.substring(508)).toBe("FEFF");
    expect(hex).toBe(hex.toUpperCase());
  });
  it("empty input gives empty string", () => {
    expect(bytesToHexUpper(new Uint8Array(0))).toBe("");
  });
});

describe("hexToBytes", () => {
  it("round-trips every byte value", () => {
    const all = new Uint8Array(256);
    for (let i = 0; i < 256; i++) all[i] = <u8>(255 - i);
    const back = hexToBytes(bytesToHexUpper(all))!;
    expect(back.length).toBe(256);
    for (let i = 0; i < 256; i++) expect(back[i]).toBe(all[i]);
  });
  it("accepts lowercase and mixed case", () => {
    const b = hexToBytes("aBcDeF09")!;
    expect(bytesToHexUpper(b)).toBe("ABCDEF09");
  });
  it("returns null on odd length or non-hex characters", () => {
    expect(hexToBytes("ABC")).toBeNull();
    expect(hexToBytes("0G")).toBeNull();
    expect(hexToBytes("g0")).toBeNull();
    expect(hexToBytes("0 ")).toBeNull();
    expect(hexToBytes("/0")).toBeNull();  // '/' is just below '0'
    expect(hexToBytes(":0")).toBeNull();  // ':' is just above '9'
    expect(hexToBytes("@0")).toBeNull();  // '@' is just below 'A'
    expect(hexToBytes("`0")).toBeNull();  // '`' is just below 'a'
    expect(hexToBytes("\u00E90")).toBeNull();
  });
  it("empty string gives empty bytes", () => {
    expect(hexToBytes("")!.length).toBe(0);
  });
});

describe("xorInto", () => {
  it("xors byte by byte, including past the 8-byte fast path", () => {
    const a = bytesOf([0xFF, 0x00, 0xAA, 0x55, 1, 2, 3, 4, 5, 6, 7]);
    const b = bytesOf([0x0F, 0xF0, 0xAA, 0xAA, 1, 1, 1, 1, 1, 1, 1]);
    xorInto(a, b);
    expect(bytesToHexUpper(a)).toBe("F0F000FF00030205040706");
  });
  it("is self-inverse: (a ^ b) ^ b == a", () => {
    const a = hexToBytes("A9993E364706816ABA3E25717850C26C9CD0D89D")!;
    const b = hexToBytes("84983E441C3BD26EBAAE4AA1F95129E5E54670F1")!;
    xorInto(a, b);
    expect(bytesToHexUpper(a)).not.toBe("A9993E364706816ABA3E25717850C26C9CD0D89D");
    xorInto(a, b);
    expect(bytesToHexUpper(a)).toBe("A9993E364706816ABA3E25717850C26C9CD0D89D");
  });
  it("only touches the common length", () => {
    const a = bytesOf([1, 2, 3, 4]);
    xorInto(a, bytesOf([1, 1]));
    expect(bytesToHexUpper(a)).toBe("00030304");
    const short = bytesOf([9]);
    xorInto(short, bytesOf([1, 2, 3]));
    expect(bytesToHexUpper(short)).toBe("08");
  });
});

describe("u64ToHexLower", () => {
  it("zero-pads to 16 lowercase digits", () => {
    expect(u64ToHexLower(0)).toBe("0000000000000000");
    expect(u64ToHexLower(0xABC)).toBe("0000000000000abc");
    expect(u64ToHexLower(0xFEDCBA9876543210)).toBe("fedcba9876543210");
  });
});
