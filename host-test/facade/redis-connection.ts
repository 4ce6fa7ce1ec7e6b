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
//   (onRawResponse L193-197). So a call may outlive the op timeout indefinitely while other calls
//   keep being answered, and a call sent just before the timer fires fails early.
// - When it fires the connection is closed (onConnectOrOpTimeout L112) and EVERY pending call
//   fails at once with NetworkError (onEvent L145-154); the next call opens a new connection.
// - Op timeout 0 is a 0 ms timer, not "none" (AsyncClientConfig op_timeout_ is milliseconds(0);
//   TimerImpl::enableTimer adds the libevent timer with a zero timeval: it fires on the next loop
//   iteration). Here it fires at the clock's next advance(), even advance(0): a reply the test
//   gives before that still wins, as a reply Envoy reads in the same loop iteration would.
// Failure behaviour: never throws on the guest's path; closing twice is a no-op.
import type { ManualClock } from "./manual-clock.js";
import type { RecordedRedisCall } from "./callouts.js";

export class RecordedRedisConnection {
  /** Calls written on this connection and not yet answered, in send order. */
  readonly pending: RecordedRedisCall[] = [];
  connected: boolean;
  closed = false;
  /** Why the connection closed: its timer fired ("timeout") or it was closed ("closed"). */
  closedBy: "timeout" | "closed" | null = null;
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
    if (this.connected && this.pending.length === 1) this.arm(this.opTimeoutMs);
  }

  /** A call leaves the pipeline: answered (`replied`, the timer restarts) or failed alone. */
  settled(call: RecordedRedisCall, replied: boolean): void {
    const i = this.pending.indexOf(call);
    if (i < 0) return;
    this.pending.splice(i, 1);
    if (this.pending.length === 0) this.disarm();
    else if (replied) this.arm(this.opTimeoutMs);
  }

  /** Closes the connection: every pending call fails with NetworkError (RawClientImpl::onEvent). */
  close(by: "timeout" | "closed" = "closed"): void {
    if (this.closed) return;
    this.closed = true;
    this.closedBy = by;
    this.connected = false;
    this.disarm();
    this.onClose(this);
    for (const call of this.pending.splice(0)) call.dropped(by === "timeout");
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
