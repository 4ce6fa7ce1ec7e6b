// A manual clock for deterministic tests: time moves only through advance(), which fires due
// timers in time order (ties in scheduling order). Failure behaviour: none.

interface Timer { at: number; seq: number; fn: () => void; cancelled: boolean }

export class ManualClock {
  private timers: Timer[] = [];
  private seq = 0;

  /** How far the system (wall) clock has been stepped from the monotonic one (stepWall). */
  private wallOffsetMs = 0;

  constructor(public nowMs: number) {}

  /** The system clock, what proxy_get_current_time_nanoseconds reads (Envoy: timeSource().systemTime()). */
  now(): number { return this.nowMs + this.wallOffsetMs; }

  /**
   * Steps the system clock by `ms` (an NTP step, a VM resume; negative: backwards) without moving
   * time: Envoy's timers (ticks, callout timeouts) run on the monotonic clock and fire as before.
   */
  stepWall(ms: number): void { this.wallOffsetMs += ms; }

  schedule(delayMs: number, fn: () => void): () => void {
    const t: Timer = { at: this.nowMs + Math.max(0, delayMs), seq: this.seq++, fn, cancelled: false };
    this.timers.push(t);
    return () => { t.cancelled = true; };
  }

  /** Moves time forward by `ms`, running every timer that falls due on the way. */
  advance(ms: number): void {
    const target = this.nowMs + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => !t.cancelled);
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers.splice(this.timers.indexOf(due), 1);
      this.nowMs = Math.max(this.nowMs, due.at);
      due.fn();
    }
    this.nowMs = target;
  }

  get pendingTimers(): number { return this.timers.filter((t) => !t.cancelled).length; }
}
