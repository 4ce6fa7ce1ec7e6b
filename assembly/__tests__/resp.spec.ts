// RESP2 codec: golden encoder bytes, every reply type, a multi-reply stream split at every byte
// offset, malformed input (reported, never trapping), nesting limits and a fuzz pass.
import {
  parseResp, RespCommand, RespKind, RespValue, RespParseResult,
  RESP_OK, RESP_INCOMPLETE, RESP_MALFORMED,
} from "../redis/resp";
import { bytesToHexUpper, hexToBytes } from "../util/hex";
import { utf8Encode } from "../util/utf8";
import { Xorshift } from "../util/prng";

// Canonical one-line description of a reply, used to compare parse results.
function describeReply(v: RespValue): string {
  switch (v.kind) {
    case RespKind.SimpleString: return "+" + v.str;
    case RespKind.Error: return "-" + v.str;
    case RespKind.Integer: return ":" + v.int.toString();
    case RespKind.BulkString: return "$" + bytesToHexUpper(v.bytes);
    case RespKind.NullBulk: return "$nil";
    case RespKind.NullArray: return "*nil";
  }
  let s = "*[";
  for (let i = 0; i < v.items.length; i++) s += (i > 0 ? "," : "") + describeReply(v.items[i]);
  return s + "]";
}

function parseText(text: string): RespParseResult {
  return parseResp(utf8Encode(text));
}

function expectReply(text: string, description: string): RespValue {
  const r = parseText(text);
  expect(r.status).toBe(RESP_OK, text);
  expect(r.consumed).toBe(utf8Encode(text).length, text);
  const v = r.value!;
  expect(describeReply(v)).toBe(description, text);
  return v;
}

function expectMalformed(text: string): void {
  const r = parseText(text);
  expect(r.status).toBe(RESP_MALFORMED, text);
  expect(r.value).toBeNull();
  expect(r.consumed).toBe(0);
  expect(r.error.includes(" at offset ")).toBe(true, text + " -> " + r.error);
}

function expectIncomplete(text: string): void {
  const r = parseText(text);
  expect(r.status).toBe(RESP_INCOMPLETE, text);
  expect(r.value).toBeNull();
  expect(r.consumed).toBe(0);
}

// Golden multi-reply stream: each entry is one reply as it appears on the wire.
const STREAM: string[] = [
  "+OK\r\n",                                 // simple string
  "-ERR unknown command 'FOO'\r\n",          // error
  ":0\r\n",                                  // integer zero
  ":-9223372036854775808\r\n",               // smallest i64
  "$5\r\nhe\r\nl\r\n",                       // bulk string whose 5 bytes contain CRLF
  "$0\r\n\r\n",                              // empty bulk string
  "$-1\r\n",                                 // null bulk string
  "*-1\r\n",                                 // null array
  "*0\r\n",                                  // empty array
  "$2\r\n\u00E9\r\n",                        // length counts UTF-8 bytes (C3 A9)
  "*3\r\n" +                                 // nested array of 3:
    ":1\r\n" +                               //   integer
    "*2\r\n$3\r\nfoo\r\n-WRONGTYPE x\r\n" +  //   array of bulk + error
    "$-1\r\n",                               //   null bulk
];
const STREAM_DESCRIPTIONS: string[] = [
  "+OK",
  "-ERR unknown command 'FOO'",
  ":0",
  ":-9223372036854775808",
  "$68650D0A6C",
  "$",
  "$nil",
  "*nil",
  "*[]",
  "$C3A9",
  "*[:1,*[$666F6F,-WRONGTYPE x],$nil]",
];

describe("resp: encoder", () => {
  it("golden bytes of a command with text, UTF-8 and integer arguments", () => {
    const bytes = new RespCommand().arg("SET").arg("k\u00E9").argInt(-42).toBytes();
    // *3            three arguments
    // $3 SET        command name
    // $3 k C3 A9    'é' is two bytes, so the length is 3
    // $3 -42        integer sent as decimal text
    expect(bytesToHexUpper(bytes)).toBe(bytesToHexUpper(utf8Encode(
      "*3\r\n" + "$3\r\nSET\r\n" + "$3\r\nk\u00E9\r\n" + "$3\r\n-42\r\n")));
  });
  it("binary and empty arguments, multi-digit lengths and counts", () => {
    const cmd = new RespCommand().arg("EVALSHA").argBytes(hexToBytes("000D0AFF")!).arg("");
    for (let i = 0; i < 9; i++) cmd.argInt(i);
    cmd.arg("x".repeat(123)).argInt(-9223372036854775808);
    expect(cmd.argCount()).toBe(14);
    const expected = "*14\r\n$7\r\nEVALSHA\r\n" + "$4\r\n\u0000\r\n\u00FF\r\n".replace("\u00FF", "#") + "$0\r\n\r\n" +
      ":0:1:2:3:4:5:6:7:8".split(":").slice(1).map<string>((d: string): string => "$1\r\n" + d + "\r\n").join("") +
      "$123\r\n" + "x".repeat(123) + "\r\n" + "$20\r\n-9223372036854775808\r\n";
    const expectedBytes = utf8Encode(expected);
    expectedBytes[expectedBytes.indexOf(0x23)] = 0xFF; // the one byte that is not valid UTF-8
    expect(bytesToHexUpper(cmd.toBytes())).toBe(bytesToHexUpper(expectedBytes));
  });
  it("an encoded command parses back to the same arguments", () => {
    const cmd = new RespCommand().arg("HINCRBY").arg("key:\u4E2D").arg("10.0.0.1:8000").argInt(1).argBytes(hexToBytes("0D0A")!);
    const r = parseResp(cmd.toBytes());
    expect(r.status).toBe(RESP_OK);
    expect(describeReply(r.value!)).toBe("*[$48494E43524259,$6B65793AE4B8AD,$31302E302E302E313A38303030,$31,$0D0A]");
  });
});

describe("resp: reply types", () => {
  it("simple string, error, integers", () => {
    expect(expectReply("+OK\r\n", "+OK").str).toBe("OK");
    const e = expectReply("-NOSCRIPT No matching script\r\n", "-NOSCRIPT No matching script");
    expect(e.isError()).toBe(true);
    expect(e.isNull()).toBe(false);
    expect(expectReply(":1000\r\n", ":1000").int).toBe(1000);
    expect(expectReply(":-1\r\n", ":-1").int).toBe(-1);
    expect(expectReply(":9223372036854775807\r\n", ":9223372036854775807").int).toBe(9223372036854775807);
    expectReply("+\r\n", "+");
  });
  it("bulk strings are binary safe and sized in bytes", () => {
    const v = expectReply("$6\r\nfoobar\r\n", "$666F6F626172");
    expect(v.str).toBe("foobar");
    const bin = parseResp(hexToBytes("24340D0A000D0AFF0D0A")!); // $4\r\n 00 0D 0A FF \r\n
    expect(bin.status).toBe(RESP_OK);
    expect(bin.consumed).toBe(10);
    expect(bytesToHexUpper(bin.value!.bytes)).toBe("000D0AFF");
    expect(bin.value!.str).toBe("\u0000\r\n\uFFFD");
    expect(expectReply("$3\r\n\u20AC\r\n", "$E282AC").str).toBe("\u20AC");
  });
  it("nulls, empty and nested arrays", () => {
    expect(expectReply("$-1\r\n", "$nil").isNull()).toBe(true);
    expect(expectReply("*-1\r\n", "*nil").isNull()).toBe(true);
    expect(expectReply("*0\r\n", "*[]").items.length).toBe(0);
    const v = expectReply("*2\r\n*1\r\n:5\r\n*0\r\n", "*[*[:5],*[]]");
    expect(v.items[0].items[0].int).toBe(5);
  });
  it("parses one reply and reports how many bytes it used", () => {
    const buf = utf8Encode(":1\r\n+PONG\r\n");
    const first = parseResp(buf);
    expect(first.consumed).toBe(4);
    const second = parseResp(buf, first.consumed);
    expect(second.status).toBe(RESP_OK);
    expect(second.value!.str).toBe("PONG");
    expect(second.consumed).toBe(7);
    expect(parseResp(buf, buf.length).status).toBe(RESP_INCOMPLETE);
  });
});

describe("resp: replies split at every byte offset", () => {
  it("the golden stream fixture parses in one go", () => {
    const full = utf8Encode(STREAM.join(""));
    let pos = 0;
    for (let i = 0; i < STREAM.length; i++) {
      const r = parseResp(full, pos);
      expect(r.status).toBe(RESP_OK);
      expect(describeReply(r.value!)).toBe(STREAM_DESCRIPTIONS[i]);
      expect(r.consumed).toBe(utf8Encode(STREAM[i]).length);
      pos += r.consumed;
    }
    expect(pos).toBe(full.length);
  });
  it("a cut anywhere is incomplete (never malformed) and resumes to the same replies", () => {
    const full = utf8Encode(STREAM.join(""));
    const starts = new Array<i32>();
    let offset = 0;
    for (let i = 0; i < STREAM.length; i++) { starts.push(offset); offset += utf8Encode(STREAM[i]).length; }
    let problems = 0;
    for (let cut = 0; cut <= full.length; cut++) {
      // First delivery: only the bytes before the cut.
      const partial = full.subarray(0, cut);
      const got = new Array<string>();
      let pos = 0;
      while (true) {
        const r = parseResp(partial, pos);
        if (r.status == RESP_OK) { got.push(describeReply(r.value!)); pos += r.consumed; continue; }
        if (r.status != RESP_INCOMPLETE) problems++;
        break;
      }
      // Everything before the cut that forms whole replies was returned, nothing more.
      const whole = got.length;
      if (pos != (whole < starts.length ? starts[whole] : full.length)) problems++;
      if (whole < starts.length && cut >= (whole + 1 < starts.length ? starts[whole + 1] : full.length)) problems++;
      // Second delivery: the rest arrives; parsing resumes where it stopped.
      while (pos < full.length) {
        const r = parseResp(full, pos);
        if (r.status != RESP_OK) { problems++; break; }
        got.push(describeReply(r.value!));
        pos += r.consumed;
      }
      if (got.join("|") != STREAM_DESCRIPTIONS.join("|")) problems++;
    }
    expect(problems).toBe(0);
  });
  it("truncated single replies are incomplete", () => {
    expectIncomplete("");
    expectIncomplete("+");
    expectIncomplete("+OK");
    expectIncomplete("+OK\r");
    expectIncomplete("-ERR");
    expectIncomplete(":-");
    expectIncomplete(":12");
    expectIncomplete("$");
    expectIncomplete("$-");
    expectIncomplete("$3\r\nab");
    expectIncomplete("$3\r\nabc");
    expectIncomplete("$3\r\nabc\r");
    expectIncomplete("*");
    expectIncomplete("*2\r\n:1\r\n");
  });
});

describe("resp: malformed input", () => {
  it("unknown type bytes, including RESP3 types", () => {
    expectMalformed("?x\r\n");
    expectMalformed("_\r\n");
    expectMalformed("%1\r\n");
    expectMalformed("hello");
    expectMalformed("\r\n");
  });
  it("bad line endings", () => {
    expectMalformed("+OK\n");
    expectMalformed("+OK\rX");
    expectMalformed(":1\rX");
  });
  it("bad integers, detected before the line ends", () => {
    expectMalformed(":12a");
    expectMalformed(":\r\n");
    expectMalformed(":+1\r\n");
    expectMalformed(":-\r\n");
    expectMalformed(": 1\r\n");
    expectMalformed(":9223372036854775808\r\n");
    expectMalformed(":-9223372036854775809\r\n");
    expectMalformed(":99999999999999999999999");
  });
  it("bad bulk strings", () => {
    expectMalformed("$-2\r\n");
    expectMalformed("$abc\r\n");
    expectMalformed("$3\r\nabcX");
    expectMalformed("$3\r\nabc\rX");
    expectMalformed("$536870913\r\n");
  });
  it("bad arrays", () => {
    expectMalformed("*-2\r\n");
    expectMalformed("*1\r\n?\r\n");
    expectMalformed("*2\r\n:1\r\nx");
    expectMalformed("*99999999999\r\n");
  });
  it("the error message locates the problem", () => {
    const r = parseText("*2\r\n:1\r\n:1x\r\n");
    expect(r.error).toBe("invalid integer at offset 10");
  });
  it("nesting beyond the depth limit is malformed", () => {
    expectReply("*1\r\n".repeat(32) + ":1\r\n", "*[".repeat(32) + ":1" + "]".repeat(32));
    expectMalformed("*1\r\n".repeat(33) + ":1\r\n");
    const shallow = parseResp(utf8Encode("*1\r\n*1\r\n:1\r\n"), 0, 1);
    expect(shallow.status).toBe(RESP_MALFORMED);
    expect(shallow.error).toBe("nesting deeper than 1 at offset 4");
    expect(parseResp(utf8Encode("*1\r\n".repeat(100000)), 0).status).toBe(RESP_MALFORMED);
  });
  it("fuzz: never traps; an ok reply's every proper prefix is incomplete", () => {
    const rng = new Xorshift(77);
    const alphabet = utf8Encode("+-:$*\r\n0123456789-abcOK");
    const fixture = utf8Encode(STREAM.join(""));
    let ok = 0, malformed = 0, violations = 0;
    for (let round = 0; round < 3000; round++) {
      let bytes: Uint8Array;
      if (round & 1) {
        const len = <i32>rng.nextBelow(24);
        bytes = new Uint8Array(len);
        for (let i = 0; i < len; i++) bytes[i] = alphabet[rng.nextBelow(alphabet.length)];
      } else {
        const from = <i32>rng.nextBelow(fixture.length);
        bytes = fixture.slice(from, from + 1 + <i32>rng.nextBelow(40));
        bytes[rng.nextBelow(bytes.length)] = round % 4 == 0 ? <u8>rng.nextBelow(256) : alphabet[rng.nextBelow(alphabet.length)];
      }
      const r = parseResp(bytes);
      if (r.status == RESP_OK) {
        ok++;
        if (!r.value || r.consumed <= 0 || r.consumed > bytes.length) violations++;
        for (let cut = 0; cut < r.consumed; cut++) {
          if (parseResp(bytes.subarray(0, cut)).status != RESP_INCOMPLETE) violations++;
        }
      } else if (r.status == RESP_MALFORMED) {
        malformed++;
        if (r.value || r.error.length == 0) violations++;
      } else if (r.status != RESP_INCOMPLETE || r.value) {
        violations++;
      }
    }
    expect(violations).toBe(0);
    expect(ok).toBeGreaterThan(100);
    expect(malformed).toBeGreaterThan(100);
  });
});
