// Circuit breaker for the Redis path: after `threshold` consecutive failures the breaker opens for
// `openMs` (doubling on each failed probe, up to 8x), so requests stop waiting for a Redis timeout
// each while it is down; after that one probe call is let through (half-open); its success closes
// the breaker. Pure: time is passed in. Picks never act as that probe (RedisClient.mayWait): the
// tick's TIME probe closes the breaker for them.
export class CircuitBreaker {
  private failures: i64 = 0;
  private openUntil: f64 = 0;
  private probing: bool = false;
  private backoff: f64 = 1;

  constructor(public threshold: i64, public openMs: f64) {}

  /** May a call be made now? In the half-open state only one probe at a time. */
  allow(now: f64): bool {
    if (this.failures < this.threshold) return true;
    if (now < this.openUntil) return false;
    if (this.probing) return false;
    this.probing = true;
    return true;
  }

  /** Open (or half-open): calls are refused until a probe succeeds. */
  isOpen(): bool { return this.failures >= this.threshold; }

  onSuccess(): void {
    this.failures = 0;
    this.probing = false;
    this.backoff = 1;
  }

  /** Opens at once (Redis known to be stalled), as if `threshold` failures had come in a row. */
  trip(now: f64): void {
    if (this.failures < this.threshold) this.failures = this.threshold - 1;
    this.onFailure(now);
  }

  onFailure(now: f64): void {
    this.failures++;
    if (this.failures >= this.threshold) {
      if (this.probing) this.backoff = Math.min(this.backoff * 2, 8);
      this.openUntil = now + this.openMs * this.backoff;
      this.probing = false;
    }
  }
}
