// Wakes the sibling VMs (the other workers of this Envoy) that hold requests when a stream of this
// VM ends: a batch slot may have freed for them, and without a word they would learn it at their
// next tick (HOLD_TICK_MS) from counts up to HOLD_COUNTS_MS old. Each VM has ONE shared queue,
// named after the VM part of its policies' tags (vmWakeTag): Envoy never frees a queue while its
// vm_id lives (cpp-host src/shared_queue.cc; Higress sets no vm_id), so a queue per policy piled
// up with every configuration update, and a retired policy's queue kept the items siblings still
// sent it. Each policy registers the VM's queue (a registration of the same name binds it to the
// newest root context, which gets the items); a stream's end enqueues one byte on each holding
// sibling's queue (their tags come from their records, sibling_streams.ts); the host calls the
// sibling's proxy_on_queue_ready on its own thread, which drains the queue and runs a pass in
// every policy. Failure behaviour: never throws; a queue that cannot be registered or resolved
// (a sibling gone) means no wake: the tick still runs the passes.
import * as host from "../../host/calls";

/** Items drained per wake at most (a few per sibling's stream end are expected). */
const DRAIN_MAX: i32 = 4096;

const WAKE = new ArrayBuffer(1);

/** This VM's part of its policies' tags: the first root context's random lease-id tag
 *  (`first`, Accounting.vmTag), kept for the VM's life. */
let vmTag: string = "";
export function vmWakeTag(first: string): string {
  if (vmTag.length == 0) vmTag = first;
  return vmTag;
}

/** The queue of the VM whose policy has `tag` (`<vm tag>.<policy>`; a tag without a dot is a VM's). */
export function wakeQueueName(tag: string): string {
  const dot = tag.indexOf(".");
  return "llmlb:wake:" + (dot < 0 ? tag : tag.substring(0, dot));
}

export class WorkerWake {
  /** This policy's queue (0: none registered: sloShareWorkers off or no late binding). */
  readonly token: u32;

  constructor(on: bool, tag: string) {
    this.token = on ? host.registerSharedQueue(wakeQueueName(tag)) : 0;
  }

  /** Wakes each sibling of `tags` (their VMs' queues; one wake per VM); returns how many were woken. */
  wake(tags: string[]): i32 {
    if (this.token == 0) return 0;
    let n = 0;
    const woken: u32[] = [];
    for (let i = 0; i < tags.length; i++) {
      const t = host.resolveSharedQueue(wakeQueueName(tags[i]));
      if (t == 0 || t == this.token || woken.includes(t)) continue;
      woken.push(t);
      if (host.enqueueSharedQueue(t, WAKE) == host.Status.Ok) n++;
    }
    return n;
  }

  /** Empties this VM's queue (the wakes are all alike). */
  drain(): void {
    for (let i = 0; i < DRAIN_MAX; i++) if (host.dequeueSharedQueue(this.token) === null) return;
  }
}
