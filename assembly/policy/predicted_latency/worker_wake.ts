// Wakes the sibling VMs (the other workers of this Envoy) that hold requests when a stream of this
// VM ends: a batch slot may have freed for them, and without a word they would learn it at their
// next tick (HOLD_TICK_MS) from counts up to HOLD_COUNTS_MS old. Each policy registers a shared
// queue named after its tag; a stream's end enqueues one byte on each holding sibling's queue
// (their tags come from their records, sibling_streams.ts); the host calls the sibling's
// proxy_on_queue_ready on its own thread (cpp-host src/shared_queue.cc), which drains the queue
// and runs a pass. Failure behaviour: never throws; a queue that cannot be registered or resolved
// (a sibling gone) means no wake: the tick still runs the passes.
import * as host from "../../host/calls";

/** Items drained per wake at most (a few per sibling's stream end are expected). */
const DRAIN_MAX: i32 = 4096;

const WAKE = new ArrayBuffer(1);

export function wakeQueueName(tag: string): string {
  return "llmlb:wake:" + tag;
}

export class WorkerWake {
  /** This policy's queue (0: none registered: sloShareWorkers off or no late binding). */
  readonly token: u32;

  constructor(on: bool, tag: string) {
    this.token = on ? host.registerSharedQueue(wakeQueueName(tag)) : 0;
  }

  /** Wakes each sibling of `tags` (their queues); returns how many were woken. */
  wake(tags: string[]): i32 {
    if (this.token == 0) return 0;
    let n = 0;
    for (let i = 0; i < tags.length; i++) {
      const t = host.resolveSharedQueue(wakeQueueName(tags[i]));
      if (t != 0 && t != this.token && host.enqueueSharedQueue(t, WAKE) == host.Status.Ok) n++;
    }
    return n;
  }

  /** Empties this policy's queue (the wakes are all alike). */
  drain(): void {
    for (let i = 0; i < DRAIN_MAX; i++) if (host.dequeueSharedQueue(this.token) === null) return;
  }
}
