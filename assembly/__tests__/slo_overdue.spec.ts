// predicted_latency without modelBatchSlots: how far behind its prediction a host runs
// (OpenStreams.overdue), the wait it predicts for a new request there instead of a slot wait.
import { OpenStream, OpenStreams } from "../policy/predicted_latency/open_streams";

/** A stream picked at `picked` on `host` with a predicted TTFT of 50 ms. */
function stream(host: string, picked: f64, streaming: bool): OpenStream {
  const s = new OpenStream(host, picked, 64, 100, 0, 0, 50, 50, 10);
  s.streaming = streaming;
  return s;
}

describe("OpenStreams.overdue", () => {
  it("is the longest wait past its predicted TTFT of a streaming request not started yet", () => {
    const o = new OpenStreams();
    o.add(stream("a", 0, true));
    o.add(stream("a", 100, true));
    o.add(stream("b", 0, true));
    expect(o.overdue("a", 130)).toBe(80);
    expect(o.overdue("a", 40)).toBe(0);
    expect(o.overdue("c", 130)).toBe(0);
  });
  it("leaves out a started stream and a non-streaming request (its first chunk is its end)", () => {
    const o = new OpenStreams();
    const started = stream("a", 0, true);
    started.firstMs = 45;
    o.add(started);
    o.add(stream("a", 0, false));
    expect(o.overdue("a", 1000)).toBe(0);
    o.add(stream("a", 900, true));
    expect(o.overdue("a", 1000)).toBe(50);
  });
  it("leaves out a stream picked before anything was learned (no predicted TTFT)", () => {
    const o = new OpenStreams();
    const cold = new OpenStream("a", 0, 64, 100, 0, 0, 0, NaN, NaN);
    cold.streaming = true;
    o.add(cold);
    expect(o.overdue("a", 500)).toBe(0);
    o.add(stream("a", 400, true));
    expect(o.overdue("a", 500)).toBe(50);
  });
  it("forgets a stream removed (ended or aborted)", () => {
    const o = new OpenStreams();
    const s = stream("a", 0, true);
    o.add(s);
    expect(o.overdue("a", 300)).toBe(250);
    o.remove(s);
    expect(o.overdue("a", 300)).toBe(0);
  });
});
