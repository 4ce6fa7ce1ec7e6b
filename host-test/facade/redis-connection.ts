// Record mode's stand-in for the one connection Envoy's Redis client keeps per worker, cluster and
// host (higress-group/envoy envoy-1.27, source/extensions/filters/network/common/redis/
// raw_client_impl.cc; the facade has one host per cluster). The calls on it are recorded for the
// test to answer (callouts.ts); what this class emulates is the connection's ONE timer,
// connect_or_op_timer_, and what its firing does:
// - Created on the first call with no live connection (async_client_impl.cc
//   threadLocalActiveClient), it arms the timer with the CLUSTER's connect_timeout
//   (RawClientImpl constructor, L48). A reachable Redis is connected at once here (Envoy: a few
//   ms later, so a call gets its op timeout from its send here, never more); an unreachable one
//   (FacadeBackend.redisUnreachable) never connects: its calls fail together when the connect
//   timeout fires.
// - Connected, a call that becomes pending with none before it arms the timer with the op timeout
//   (makeRawRequest L92-94: "the first request on the pipeline"); a later call does NOT restart it.
// - Every reply restarts it while calls remain pending, and disarms it when none remain
//   (onRawResponse L193-197). Replies come in send order (the reply goes to the oldest pending
//   call, L171-181; callouts.ts reply() refuses any other), so a call may outlive the op timeout
//   indefinitely while the calls ahead of it are answered slowly, and a call sent just before the
//   timer fires fails early.
// - When it fires the connection is closed (onConnectOrOpTimeout L112) and EVERY pending call
//   fails at once with NetworkError (onEvent L145-154); the next call opens a new connection.
// - That close is the only NetworkError Envoy's client has: a connection dropped by Redis, reset
//   or closed on a protocol error fails every pending call the same way, so a recorded call's
//   fail() drops its connection. Calls the failure callbacks make meanwhile fail with them
//   (close() below).
// - Op timeout 0 is a 0 ms timer, not "none" (AsyncClientConfig op_timeout_ is milliseconds(0);
//   TimerImpl::enableTimer adds the libevent timer with a zero timeval: it fires on the next loop
//   iteration). Here it fires at the clock's next advance(), even advance(0): a reply the test
//   gives before that still wins, as a reply Envoy reads in the same loop iteration would.
// Failure behaviour: never throws on the guest's path; closing twice is a no-op.
import type { ManualClock } from "./manual-clock.js";
import type { RecordedRedisCall } from "./callouts.js";

export type RedisCloseReason = "timeout" | "dropped" | "reinit";

export class RecordedRedisConnection {
  /** Calls written on this connection and not yet answered, in send order. */
  readonly pending: RecordedRedisCall[] = [];
  connected: boolean;
  /** Set when the close starts; calls written while its failures are delivered fail with them. */
  closed = false;
  /** Why it closed: its timer fired, the connection dropped (`fail()`), or a redis_init closed it. */
  closedBy: RedisCloseReason | null = null;
  private cancelTimer: (() => void) | null = null;

  constructor(
    private readonly clock: ManualClock,
    readonly opTimeoutMs: number,
    readonly connectTimeoutMs: number,
    reachable: boolean,
    private readonly onClose: (conn: RecordedRedisConnection) => void,
  ) {
    this.connected = reachable;
    // The connect timer runs until the Connected event; here a reachable Redis connects at once.
    if (!reachable) this.arm(connectTimeoutMs);
  }

  /** A call written on the connection (makeRawRequest). */
  add(call: RecordedRedisCall): void {
    this.pending.push(call);
    if (this.closed) return; // written during the close: failed by its loop below
    if (this.connected && this.pending.length === 1) this.arm(this.opTimeoutMs);
  }

  /** A call leaves the pipeline: answered (`replied`, the timer restarts) or dropped. */
  settled(call: RecordedRedisCall, replied: boolean): void {
    const i = this.pending.indexOf(call);
    if (i < 0) return;
    this.pending.splice(i, 1);
    if (this.pending.length === 0) this.disarm();
    else if (replied) this.arm(this.opTimeoutMs);
  }

  /**
   * Closes the connection: every pending call fails with NetworkError, in send order
   * (RawClientImpl::onEvent L145-154). The guest's failure callbacks run inside that loop, and the
   * worker's client still maps the host to this connection until the loop is over (its own
   * onEvent comes after the raw client's, async_client_impl.cc L162-168), so a call a callback
   * makes is written here and fails in the same loop. A redis_init's close is different: it runs
   * inside a VM call, Envoy defers the callbacks until the call returns (context.cc
   * onRedisCallFailure, current_context_), and by then the client was replaced: the connection
   * leaves the client first.
   */
  close(by: RedisCloseReason): void {
    if (this.closed) return;
    this.closed = true;
    this.closedBy = by;
    this.connected = false;
    this.disarm();
    if (by === "reinit") this.onClose(this);
    for (let call = this.pending.shift(); call; call = this.pending.shift()) call.dropped(by === "timeout");
    this.onClose(this);
  }

  private arm(ms: number): void {
    this.disarm();
    this.cancelTimer = this.clock.schedule(ms, () => { this.cancelTimer = null; this.close("timeout"); });
  }

  private disarm(): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
  }
}
