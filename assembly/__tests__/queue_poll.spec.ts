// The admission queue's poll spacing: near the head every queuePollMs; further back about once per
// capacity-worth of requests ahead; never rarer than a third of the entry TTL (it must stay alive).
import { pollInterval } from "../services/queue/admission";

describe("pollInterval", () => {
  it("polls the head every queuePollMs", () => {
    expect(pollInterval(0, 4, 20, 3000)).toBe(20.0);
    expect(pollInterval(7, 4, 20, 3000)).toBe(20.0);
  });
  it("spaces entries further back by their distance in capacity rounds", () => {
    expect(pollInterval(40, 4, 20, 3000)).toBe(200.0);
  });
  it("still heartbeats at least three times per entry TTL", () => {
    expect(pollInterval(100000, 4, 20, 3000)).toBe(1000.0);
  });
});
