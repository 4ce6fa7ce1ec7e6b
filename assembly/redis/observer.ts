// What the Redis client reports for stats (call latency, failures by kind, breaker transitions),
// without knowing where it goes: services/stats.ts implements it; the default ignores everything.
export const REDIS_FAIL_REFUSED: i32 = 0; // proxy_redis_call refused (not sent)
export const REDIS_FAIL_NETWORK: i32 = 1; // NetworkError before the timeout
export const REDIS_FAIL_TIMEOUT: i32 = 2; // NetworkError at/after the timeout, or no reply at all
export const REDIS_FAIL_BAD_REPLY: i32 = 3; // reply bytes missing or not RESP
export const REDIS_FAIL_ERROR_REPLY: i32 = 4; // a RESP error reply (script error, ACL, OOM...)
export const REDIS_FAIL_DEADLINE: i32 = 5; // no reply within the pick deadline (pickDeadlineMs)
export const REDIS_FAIL_OVERDUE: i32 = 6; // a pick not sent: an earlier pick's deadline passed with no reply since
export const REDIS_FAIL_KINDS: string[] = ["refused", "network", "timeout", "bad_reply", "error_reply", "pick_deadline", "overdue"];

export class RedisObserver {
  /** A reply arrived `ms` after the call was sent. */
  replied(ms: f64): void {}
  failed(kind: i32): void {}
  /** The breaker went from closed to open (true) or back (false). */
  breakerChanged(open: bool): void {}
}
