// Runs a virtual-time simulation: events in clock order, as fast as the CPU allows, pausing only
// when the next event is a Redis reply that has not come back from the real server yet.
// Failure behaviour: throws when the run stalls (nothing queued before `until` holds: a driver bug).
import type { EventClock } from "./event-clock.js";
import type { VirtualRedisLink } from "./redis-link.js";

export async function runEvents(clock: EventClock, redis: VirtualRedisLink | null, until: () => boolean, onProgress?: () => void): Promise<void> {
  let sinceProgress = 0;
  while (!until()) {
    if (clock.nextIsUnfilled()) {
      if (!redis || !(await redis.nextReply())) throw new Error("virtual run stalled: a reply slot has no call");
      continue;
    }
    if (!clock.runNext()) throw new Error(`virtual run stalled at ${clock.now().toFixed(1)} ms: no event queued`);
    if (onProgress && ++sinceProgress >= 5000) { sinceProgress = 0; onProgress(); }
  }
}
