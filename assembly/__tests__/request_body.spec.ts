// The request body as the policies read it: whether it asks for a streamed response.
import { MAX_OUTPUT_TOKENS, RequestBody } from "../services/request/body";

function body(text: string, truncated: bool = false): RequestBody {
  return new RequestBody(Uint8Array.wrap(String.UTF8.encode(text)), truncated);
}

describe("RequestBody.streams", () => {
  it("is true only for \"stream\": true", () => {
    expect(body('{"model":"m","stream":true}').streams()).toBe(true);
    expect(body('{"model":"m","stream":false}').streams()).toBe(false);
    expect(body('{"model":"m"}').streams()).toBe(false);
    expect(body('{"model":"m","stream":"true"}').streams()).toBe(false);
    expect(body('{"model":"m","stream":1}').streams()).toBe(false);
  });
  it("is false for a body it cannot read (not JSON, truncated)", () => {
    expect(body("stream: true").streams()).toBe(false);
    expect(body('{"stream":true', true).streams()).toBe(false);
  });
});

describe("RequestBody.maxOutputTokens", () => {
  it("is max_tokens, else max_completion_tokens, else max_output_tokens; 0 when none is positive", () => {
    expect(body('{"max_tokens":16}').maxOutputTokens()).toBe(16);
    expect(body('{"max_tokens":0,"max_completion_tokens":32}').maxOutputTokens()).toBe(32);
    expect(body('{"max_tokens":-1,"max_output_tokens":8}').maxOutputTokens()).toBe(8);
    expect(body('{"max_tokens":"16"}').maxOutputTokens()).toBe(0);
    expect(body('{"model":"m"}').maxOutputTokens()).toBe(0);
  });
  it("is at most MAX_OUTPUT_TOKENS whatever the client wrote (1e999 parses as Infinity)", () => {
    expect(body('{"max_tokens":1e999}').maxOutputTokens()).toBe(MAX_OUTPUT_TOKENS);
    expect(body('{"max_tokens":1e308}').maxOutputTokens()).toBe(MAX_OUTPUT_TOKENS);
    expect(body('{"max_tokens":-1e999,"max_completion_tokens":1e400}').maxOutputTokens()).toBe(MAX_OUTPUT_TOKENS);
    expect(body('{"max_tokens":1e999,"messages":[]}').estimatedTokens()).toBeGreaterThan(0);
  });
});

describe("RequestBody.promptChars", () => {
  it("sums the messages' text lengths (UTF-16 units, escapes decoded), raw JSON length for other content", () => {
    // "ab\ncd" = 5, "é\u00e9" = 2, [{"type":"text"}] = 17 raw, a message without content and a non-object: 0.
    expect(body('{"messages":[{"role":"user","content":"ab\\ncd"},{"content":"é\\u00e9"},{"content":[{"type":"text"}]},{"role":"x"},3]}').promptChars()).toBe(24);
    expect(body('{"messages":[]}').promptChars()).toBe(0);
  });
  it("reads prompt, else input, else the body's size", () => {
    expect(body('{"prompt":"a\\tb"}').promptChars()).toBe(3);
    expect(body('{"input":["x","y"]}').promptChars()).toBe(9);
    expect(body('{"model":"m"}').promptChars()).toBe(13);
    expect(body('not json').promptChars()).toBe(8);
  });
});
