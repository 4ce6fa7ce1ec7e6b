// The SSE parser: events split anywhere across chunks.
import { describe, expect, it } from "vitest";
import { SseParser } from "../../bench/sse-parser.js";

describe("SseParser", () => {
  it("returns complete events only, whatever the chunk boundaries", () => {
    const text = 'data: {"a":1}\n\ndata: {"b":"é"}\r\n\r\n: comment\n\ndata: [DONE]\n\n';
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const p = new SseParser();
      const events = [...p.push(bytes.subarray(0, cut)), ...p.push(bytes.subarray(cut))];
      expect(events).toEqual(['{"a":1}', '{"b":"é"}', "[DONE]"]);
    }
  });

  it("joins multi-line data with a newline", () => {
    expect(new SseParser().push("data: one\ndata:two\n\n")).toEqual(["one\ntwo"]);
  });
});
