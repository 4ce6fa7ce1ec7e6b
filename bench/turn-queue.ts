// The turns ready to be sent. A session's first turn is ready at once; each later turn becomes
// ready only when the previous one has completed (its reply is part of the next prompt), at the
// front ("immediate") or the back ("queued") of the queue. A failed turn abandons the rest of its
// session. take() waits while turns are in flight that may unlock more; it resolves null when
// nothing is left or after stop(). Never throws.
import type { Session, Workload } from "./workloads/types.js";

export interface SessionState {
  session: Session;
  /** Index of the turn to send next. */
  nextTurn: number;
  /** Replies received so far, one per completed turn. */
  replies: string[];
  /** Gateway (connection) index, assigned on the first turn; -1 before. */
  gateway: number;
}

export class TurnQueue {
  private readonly ready: SessionState[];
  private readonly waiters: Array<(s: SessionState | null) => void> = [];
  private inFlight = 0;
  private stopped = false;
  /** Turns never sent because their session failed earlier. */
  abandonedTurns = 0;

  constructor(private readonly workload: Workload) {
    this.ready = workload.sessions.map((session) => ({ session, nextTurn: 0, replies: [], gateway: -1 }));
  }

  /** A ready turn now, or null when none is ready at this moment. */
  tryTake(): SessionState | null {
    if (this.stopped) return null;
    const s = this.ready.shift() ?? null;
    if (s) this.inFlight++;
    return s;
  }

  /** The next ready turn, waiting for in-flight turns to unlock one; null when exhausted or stopped. */
  take(): Promise<SessionState | null> {
    const s = this.tryTake();
    if (s || this.stopped || this.inFlight === 0) return Promise.resolve(s);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Reports the outcome of the turn taken as `s`; on success its reply joins the conversation. */
  complete(s: SessionState, ok: boolean, reply: string): void {
    this.inFlight--;
    const turnsLeft = s.session.turns.length - s.nextTurn - 1;
    if (!ok) this.abandonedTurns += turnsLeft;
    else if (turnsLeft > 0) {
      s.replies.push(reply);
      s.nextTurn++;
      if (this.workload.followUps === "immediate") this.ready.unshift(s);
      else this.ready.push(s);
    }
    this.wakeWaiters();
  }

  /** Turns that could still be sent (ready or unlocked later), excluding abandoned ones. */
  remainingTurns(): number {
    return this.ready.reduce((sum, s) => sum + s.session.turns.length - s.nextTurn, 0);
  }

  stop(): void {
    this.stopped = true;
    this.wakeWaiters();
  }

  private wakeWaiters(): void {
    while (this.waiters.length > 0) {
      const s = this.tryTake();
      if (!s && !this.stopped && this.inFlight > 0) return; // keep waiting for another completion
      this.waiters.shift()!(s);
    }
  }
}
