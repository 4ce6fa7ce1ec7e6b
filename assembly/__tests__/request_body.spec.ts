// The request body as the policies read it: whether it asks for a streamed response.
import { RequestBody } from "../services/request/body";

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
