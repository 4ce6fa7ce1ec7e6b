// The rows of the SLO benchmarks (bench/slo/hetero.ts, burst.ts): a request counts as served only
// when it ended without an error. An outcome can carry status 200 and an error: a stream aborted
// after its 200 headers at the run's drain deadline, or a request a central picker still held
// then (bench/virtual/virtual-picker.ts), or a wall stream cut or timed out.
import { describe, expect, it } from "vitest";
import { row } from "../../bench/slo/burst.js";
import { heteroJobs, heteroRow, type Seen } from "../../bench/slo/hetero.js";

describe("slo-hetero's row", () => {
  it("counts a 200 that ended in an error as failed, never as met, and leaves it out of the percentiles", () => {
    const jobs = heteroJobs(20, 1, 3).slice(0, 4);
    expect(jobs).toHaveLength(4);
    const seen = (over: Partial<Seen>): Seen => ({ status: 200, error: null, ttftMs: 10, tpotMs: 1, debug: "x:ttft=10", ...over });
    // The last one got its first token in time, then was cut (tokens so far within the TPOT SLO).
    const r = heteroRow("p", jobs, [seen({}), seen({}), seen({}), seen({ error: "client_abort", ttftMs: 1000, debug: "x:ttft=10" })], 1);
    expect(r.failed).toBe(1);
    expect(r.attainment).toBe(0.75);
    expect(r.ttftP90).toBe(10);
    expect(r.predErrP90).toBe(0);
  });
});

describe("slo-burst's row", () => {
  it("serves a tenant only what ended without an error", () => {
    const list = [{ at: 0, tenant: "A", prompt: "" }, { at: 1, tenant: "B", prompt: "" }, { at: 2, tenant: "B", prompt: "" }];
    const line = row("queueing", 1, list, [{ status: 200, error: null, waitMs: 5 }, { status: 200, error: null, waitMs: 5 }, { status: 200, error: "client_abort", waitMs: 60_000 }]);
    expect(line).toBe("| queueing | 1 | 3 | 1 | 5 / 5 | 5 / 5 | A 1/1, B 1/2 | 0.0% |");
  });
});
