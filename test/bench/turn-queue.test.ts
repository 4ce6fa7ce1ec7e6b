// The turn queue: follow-ups wait for their previous turn; ordering; abandonment; termination.
import { describe, expect, it } from "vitest";
import { TurnQueue } from "../../bench/turn-queue.js";
import type { Workload } from "../../bench/workloads/types.js";

function workload(followUps: Workload["followUps"]): Workload {
  const turns = [{ question: "q0", outputTokens: 1 }, { question: "q1", outputTokens: 1 }];
  return { name: "w", followUps, sessions: ["a", "b"].map((id) => ({ id, group: 0, systemPrompt: null, turns })) };
}

describe("TurnQueue", () => {
  it("releases a follow-up only after its previous turn, at the front when immediate", async () => {
    const q = new TurnQueue(workload("immediate"));
    const a = q.tryTake()!;
    expect(a.session.id).toBe("a");
    q.complete(a, true, "reply-a");
    const next = q.tryTake()!;
    expect([next.session.id, next.nextTurn, next.replies]).toEqual(["a", 1, ["reply-a"]]);
  });

  it("queues follow-ups behind waiting sessions when queued", () => {
    const q = new TurnQueue(workload("queued"));
    const a = q.tryTake()!;
    q.complete(a, true, "r");
    expect(q.tryTake()!.session.id).toBe("b");
    expect(q.tryTake()!.session.id).toBe("a");
  });

  it("take() waits for an in-flight turn to unlock the next, then ends with null", async () => {
    const q = new TurnQueue({ ...workload("queued"), sessions: workload("queued").sessions.slice(0, 1) });
    const first = (await q.take())!;
    const waiting = q.take();
    q.complete(first, true, "r");
    const second = (await waiting)!;
    expect(second.nextTurn).toBe(1);
    const end = q.take();
    q.complete(second, true, "r2");
    expect(await end).toBeNull();
  });

  it("abandons the rest of a session whose turn failed, and stop() ends waiting takers", async () => {
    const q = new TurnQueue(workload("queued"));
    const a = q.tryTake()!;
    q.complete(a, false, "");
    expect(q.abandonedTurns).toBe(1);
    const b = q.tryTake()!;
    const waiting = q.take();
    q.stop();
    expect(await waiting).toBeNull();
    q.complete(b, true, "r");
    expect(q.remainingTurns()).toBe(1);
  });
});
