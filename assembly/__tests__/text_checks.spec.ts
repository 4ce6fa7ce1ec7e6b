// Configuration text checks: exact numbers, header names, host names, host:port.
import { isClusterName, isDecimalText, isHeaderName, isHostName, isHostPort, isIntegerText, isKeyPrefix, isNumberText, isPathText } from "../config/text_checks";

describe("isNumberText: the whole string is one JSON number", () => {
  it("accepts", () => {
    const ok = ["0", "6379", "-3", "0.6", "1e3", "2.5E-2", "10.0"];
    for (let i = 0; i < ok.length; i++) expect(isNumberText(ok[i])).toBe(true, ok[i]);
  });
  it("refuses", () => {
    const bad = ["", "3s", "10abc", "6379; FLUSHALL", " 1", "1 ", "0x10", "01", "1.", ".5", "+1", "1e", "-", "NaN", "Infinity"];
    for (let i = 0; i < bad.length; i++) expect(isNumberText(bad[i])).toBe(false, bad[i]);
  });
});

describe("isIntegerText / isDecimalText: gjson's Int() and Go's ParseFloat (decimal) on a string", () => {
  it("integers: digits, an optional '-', leading zeros", () => {
    const ok = ["0", "6379", "-3", "0500", "-007"];
    for (let i = 0; i < ok.length; i++) expect(isIntegerText(ok[i])).toBe(true, ok[i]);
    const bad = ["", "-", "+5", "1e3", "10.0", " 5", "5 ", "0x10", "5s", "1_000"];
    for (let i = 0; i < bad.length; i++) expect(isIntegerText(bad[i])).toBe(false, bad[i]);
  });
  it("decimals: sign, digits around an optional '.', an optional exponent", () => {
    const ok = ["0", "0.6", ".5", "5.", "+0.5", "-2", "00.5", "1e3", "2.5E-2", "5e+1"];
    for (let i = 0; i < ok.length; i++) expect(isDecimalText(ok[i])).toBe(true, ok[i]);
    const bad = ["", ".", "+", "-.", "1e", "e1", "NaN", "inf", "Infinity", "0x1p-1", "1_0", " 1", "1 ", "0.5x"];
    for (let i = 0; i < bad.length; i++) expect(isDecimalText(bad[i])).toBe(false, bad[i]);
  });
});

describe("isHeaderName: RFC 9110 token", () => {
  it("accepts tokens, refuses separators and controls", () => {
    expect(isHeaderName("x-llmlb-debug")).toBe(true);
    expect(isHeaderName("X_Custom.1~!#$%&'*+^`|")).toBe(true);
    const bad = ["", "x bad", "x\r\nb", ":authority", "x:y", "x(y)", "x\ty", "é"];
    for (let i = 0; i < bad.length; i++) expect(isHeaderName(bad[i])).toBe(false, bad[i]);
  });
});

describe("hosts", () => {
  it("isHostName", () => {
    expect(isHostName("redis.static")).toBe(true);
    expect(isHostName("redis.default.svc.cluster.local")).toBe(true);
    const bad = ["", "a..b", ".a", "a.", "redis static", "redis|x", "a:1"];
    for (let i = 0; i < bad.length; i++) expect(isHostName(bad[i])).toBe(false, bad[i]);
  });
  it("isHostPort", () => {
    const ok = ["10.0.0.1:8000", "pod-0.vllm:80", "[::1]:443", "[fe80::1]:1", "h:65535"];
    for (let i = 0; i < ok.length; i++) expect(isHostPort(ok[i])).toBe(true, ok[i]);
    const bad = ["10.0.0.1", "10.0.0.1:", ":80", "h:0", "h:65536", "h:8o", "h :80", "[::1]", "[zz]:80", "::1:80", "h:080000"];
    for (let i = 0; i < bad.length; i++) expect(isHostPort(bad[i])).toBe(false, bad[i]);
  });
});

describe("other values", () => {
  it("isKeyPrefix and isPathText", () => {
    expect(isKeyPrefix("llmlb")).toBe(true);
    expect(isKeyPrefix("a{b")).toBe(false);
    expect(isKeyPrefix("a b")).toBe(false);
    expect(isKeyPrefix("")).toBe(false);
    expect(isPathText("/metrics")).toBe(true);
    expect(isPathText("metrics")).toBe(false);
    expect(isPathText("/a b")).toBe(false);
  });

  it("isClusterName: any text but control characters", () => {
    expect(isClusterName("outbound|443||llm-a.internal.dns")).toBe(true);
    expect(isClusterName("")).toBe(false);
    expect(isClusterName("a\r\nb")).toBe(false);
    expect(isClusterName("a\tb")).toBe(false);
    expect(isClusterName("a\x7Fb")).toBe(false);
  });
});
