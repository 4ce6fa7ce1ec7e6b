// The plugin's clock: proxy_get_current_time_nanoseconds is Envoy's system (wall) clock, which
// an NTP step, a VM resume or an operator can move backwards by seconds to hours. Every interval
// the plugin measures (`now - last < period`: the full tick, lease renewals, queue polls and waits,
// the breaker's window, metrics freshness, holds) would then be negative for the length of the jump:
// leases unrenewed and expired in Redis while their streams run, queued requests never polled, a
// breaker open for an hour. So the plugin reads a clock that follows the wall clock's forward steps
// and ignores its backward ones (pure; the times sent to Redis are set against Redis's own TIME).

export class MonoClock {
  private lastWall: f64 = NaN;
  private mono: f64 = 0;

  /** The monotonic time for a wall reading `wall` (ms): the first reading as it is, then the sum of
   *  the forward steps since. */
  read(wall: f64): f64 {
    if (!isFinite(wall)) return this.mono;
    if (isNaN(this.lastWall)) {
      this.lastWall = wall;
      this.mono = wall;
      return wall;
    }
    if (wall > this.lastWall) this.mono += wall - this.lastWall;
    this.lastWall = wall;
    return this.mono;
  }

  /** How far this clock runs ahead of the wall clock (the backward steps it ignored), ms. */
  offset(): f64 {
    return isNaN(this.lastWall) ? 0 : this.mono - this.lastWall;
  }

  /** Runs this clock `target` ms ahead of the wall clock, if that is ahead of where it is (a clock
   *  never goes back). */
  adoptOffset(target: f64): void {
    if (isNaN(this.lastWall) || !isFinite(target)) return;
    const o = this.offset();
    if (target > o) this.mono += target - o;
  }
}
