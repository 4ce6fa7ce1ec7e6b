// RESP2 codec: encoding, framing (incomplete / malformed / nested / binary) and decoding.
import { describe, expect, it } from "vitest";
import { encodeCommand, parseReply, replyLength, RespError } from "../../host-test/resp.js";

const b = (s: string) => Buffer.from(s, "binary");

describe("encodeCommand", () => {
  it("encodes an array of bulk strings, numbers as decimal text", () => {
    expect(encodeCommand(["incr", "foo", 1]).toString()).toBe("*3\r\n$4\r\nincr\r\n$3\r\nfoo\r\n$1\r\n1\r\n");
  });

  it("counts bytes, not characters, and keeps binary arguments intact", () => {
    const bin = Buffer.from([0x00, 0x0d, 0x0a, 0xff]);
    const out = encodeCommand(["SET", "é", bin]);
    expect(out.equals(Buffer.concat([b("*3\r\n$3\r\nSET\r\n$2\r\n"), Buffer.from("é"), b("\r\n$4\r\n"), bin, b("\r\n")]))).toBe(true);
  });

  it("encodes an empty argument list", () => {
    expect(encodeCommand([]).toString()).toBe("*0\r\n");
  });
});

describe("replyLength", () => {
  const complete: Array<[string, string]> = [
    ["simple string", "+OK\r\n"],
    ["error", "-NOSCRIPT No matching script. Please use EVAL.\r\n"],
    ["integer", ":-42\r\n"],
    ["bulk", "$5\r\nhello\r\n"],
    ["empty bulk", "$0\r\n\r\n"],
    ["null bulk", "$-1\r\n"],
    ["null array", "*-1\r\n"],
    ["empty array", "*0\r\n"],
    ["nested array", "*3\r\n:1\r\n*2\r\n$1\r\na\r\n*0\r\n$-1\r\n"],
    ["bulk with CRLF inside", "$4\r\n\r\n\r\n\r\n"],
  ];

  it.each(complete)("frames a complete %s and reports every strict prefix as incomplete", (_name, text) => {
    const buf = b(text);
    expect(replyLength(buf)).toBe(buf.length);
    for (let cut = 0; cut < buf.length; cut++) expect(replyLength(buf.subarray(0, cut))).toBe(-1);
  });

  it("frames only the first of several pipelined replies, and honours offset", () => {
    const buf = b("+OK\r\n:7\r\n$2\r\nhi\r\n");
    expect(replyLength(buf)).toBe(5);
    expect(replyLength(buf, 5)).toBe(4);
    expect(replyLength(buf, 9)).toBe(8);
    expect(replyLength(buf, 17)).toBe(-1);
  });

  it.each([
    ["unknown type byte", "!3\r\nabc\r\n"],
    ["RESP3 map", "%1\r\n+a\r\n+b\r\n"],
    ["integer that is not a number", ":12a\r\n"],
    ["bulk with bad length", "$x\r\nab\r\n"],
    ["bulk length below -1", "$-2\r\n"],
    ["bulk not followed by CRLF", "$2\r\nabcd\r\n"],
    ["array with bad count", "*two\r\n"],
    ["bare LF in a line", "+O\nK\r\n"],
    ["CR not followed by LF", "+OK\rX"],
    ["malformed element inside an array", "*2\r\n:1\r\n?\r\n"],
  ])("rejects %s as malformed", (_name, text) => {
    expect(replyLength(b(text))).toBe(-2);
  });

  it("walks deeply nested arrays without recursion", () => {
    const depth = 200_000;
    const buf = Buffer.concat([b("*1\r\n".repeat(depth)), b(":1\r\n")]);
    expect(replyLength(buf)).toBe(buf.length);
    expect(replyLength(buf.subarray(0, buf.length - 1))).toBe(-1);
  });
});

describe("parseReply", () => {
  it("decodes every RESP2 type, bulk strings as UTF-8 strings by default", () => {
    const reply = parseReply(b("*6\r\n+OK\r\n:12\r\n$-1\r\n*-1\r\n*2\r\n$3\r\nabc\r\n*0\r\n-ERR boom here\r\n"));
    expect(reply).toHaveLength(6);
    const [ok, n, nullBulk, nullArray, nested, err] = reply as unknown[];
    expect(ok).toBe("OK");
    expect(n).toBe(12);
    expect(nullBulk).toBeNull();
    expect(nullArray).toBeNull();
    expect(nested).toEqual(["abc", []]);
    expect(err).toBeInstanceOf(RespError);
    expect((err as RespError).message).toBe("ERR boom here");
    expect((err as RespError).code).toBe("ERR");
  });

  it("returns binary-safe Buffers for bulk strings when asked", () => {
    const payload = Buffer.from([0xff, 0x00, 0x0d, 0x0a]);
    const reply = parseReply(Buffer.concat([b("$4\r\n"), payload, b("\r\n")]), { bulk: "buffer" });
    expect(Buffer.isBuffer(reply) && reply.equals(payload)).toBe(true);
  });

  it("throws on incomplete and malformed input", () => {
    expect(() => parseReply(b("$5\r\nhel"))).toThrow(/incomplete/);
    expect(() => parseReply(b("?\r\n"))).toThrow(/malformed/);
  });
});
