// The omniscient central picker reads each engine's true state, its speed too: a pod running
// 2x slower (the SLO benchmarks' slow pods) costs twice the time for the same work.
import { describe, expect, it } from "vitest";
import { OmniscientPicker } from "../../bench/omniscient-picker.js";
import { EventClock } from "../../bench/virtual/event-clock.js";
import { VirtualFleet } from "../../bench/virtual/virtual-fleet.js";

describe("omniscient picker", () => {
  it("counts a pod's slow factor: of two idle pods, the request goes to the faster one", () => {
    const fleet = new VirtualFleet(new EventClock(), { pods: 2, profile: "tiny", seed: 1, metricsIntervalMs: 0 });
    try {
      fleet.pods[0].engine.slowFactor = 2;
      const body = { messages: [{ role: "user", content: "a prompt of some words" }], max_tokens: 8 };
      expect(new OmniscientPicker(fleet.pods).pick(body).pod).toBe(1);
    } finally {
      fleet.close();
    }
  });
});
