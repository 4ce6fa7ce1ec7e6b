// The Redis of a virtual run: ONE pipelined connection to a real redis-server shared by every
// gateway and VM of the run, so Redis executes the calls in exactly the order the event loop made
// them (a run is reproducible), at the virtual instant they were sent (script time: VirtualLua).
// Each reply is delivered to the guest `rttMs` of virtual time after the call, in a slot booked on
// the clock when the call was sent; the event loop waits for the real reply before it reaches
// that slot (bench/virtual/event-loop.ts).
// Failure behaviour: a lost connection delivers null (NetworkError) to the pending calls, as the
// gateway's client does; nothing throws.
import { RedisClusterClient } from "../../host-test/gateway/redis-client.js";
import type { EventClock } from "./event-clock.js";
import type { VirtualLua } from "./virtual-lua.js";

export class VirtualRedisLink {
  private readonly client: RedisClusterClient;
  private readonly pending: Array<Promise<void>> = [];
  /** Calls sent, and the bytes of the calls and of their replies (for reports). */
  calls = 0;
  bytesSent = 0;
  bytesReceived = 0;

  constructor(private readonly clock: EventClock, private readonly lua: VirtualLua, port: number, private readonly rttMs: number) {
    // The op timeout is wall time: generous, a virtual run never waits on it.
    this.client = new RedisClusterClient({ host: "127.0.0.1", port, timeoutMs: 600_000 });
  }

  call(query: Buffer, done: (reply: Buffer | null) => void): void {
    this.calls++;
    const slot = this.clock.reserve(this.clock.now() + this.rttMs);
    const sent = this.lua.translate(query, this.clock.unixMs());
    this.bytesSent += query.length;
    this.pending.push(this.client.call(sent).then((reply) => {
      this.bytesReceived += reply?.length ?? 0;
      this.clock.fill(slot, () => done(reply));
    }));
  }

  /** Waits for the oldest outstanding reply (the earliest booked slot); false when none. */
  async nextReply(): Promise<boolean> {
    const p = this.pending.shift();
    if (!p) return false;
    await p;
    return true;
  }

  get outstanding(): number { return this.pending.length; }

  close(): void { this.client.close(); }
}
