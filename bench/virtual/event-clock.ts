// The one discrete-event clock of a virtual-time run: simulated ms from 0, events ordered by
// (time, sequence number), so ties run in the order they were scheduled and a run is a pure
// function of its inputs. A "reservation" books an event's place now and fills in its action later
// (a Redis reply: its delivery instant and its place among ties are fixed when the call is sent,
// the reply bytes come back from the real server afterwards); the run loop (bench/virtual/
// event-loop.ts) never passes an unfilled reservation.
// Failure behaviour: scheduling in the past or a NaN delay throws (a driver bug).
import type { SimClock } from "../../host-test/sim/engine.js";

interface Entry { at: number; seq: number; fn: (() => void) | null; cancelled: boolean }

/** Unix ms of virtual time 0: fixed, so the plugin and the Lua scripts see the same instants every run. */
export const VIRTUAL_EPOCH_MS = 1_767_225_600_000; // 2026-01-01T00:00:00Z

export class EventClock implements SimClock {
  readonly epochMs = VIRTUAL_EPOCH_MS;
  private nowMs = 0;
  private seq = 0;
  private heap: Entry[] = [];
  /** Events run so far (a cost figure for reports). */
  eventsRun = 0;

  now(): number { return this.nowMs; }

  /** Unix ms of the current instant (what the plugin's clock and Redis TIME show in virtual runs). */
  unixMs(): number { return this.epochMs + this.nowMs; }

  after(delayMs: number, fn: () => void): () => void {
    return this.at(this.nowMs + Math.max(0, delayMs), fn);
  }

  at(atMs: number, fn: () => void): () => void {
    const e = this.push(atMs, fn);
    return () => { e.cancelled = true; };
  }

  /** Books the place of an event whose action is not known yet; fill() supplies it. */
  reserve(atMs: number): Entry {
    return this.push(atMs, null);
  }

  fill(entry: Entry, fn: () => void): void { entry.fn = fn; }

  /** Time of the next live event, or null when none is queued. */
  peekTime(): number | null {
    this.dropCancelled();
    return this.heap.length > 0 ? this.heap[0].at : null;
  }

  /** The next live event is a reservation not filled yet (its reply has not arrived). */
  nextIsUnfilled(): boolean {
    this.dropCancelled();
    return this.heap.length > 0 && this.heap[0].fn === null;
  }

  /** Runs the next event (advancing the clock); false when nothing is queued or it is unfilled. */
  runNext(): boolean {
    this.dropCancelled();
    const top = this.heap[0];
    if (!top || top.fn === null) return false;
    this.pop();
    this.nowMs = top.at;
    this.eventsRun++;
    top.fn();
    return true;
  }

  get size(): number { return this.heap.length; }

  private push(atMs: number, fn: (() => void) | null): Entry {
    if (!(atMs >= this.nowMs)) throw new Error(`EventClock: event at ${atMs} is before now (${this.nowMs})`);
    const e: Entry = { at: atMs, seq: this.seq++, fn, cancelled: false };
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!less(h[i], h[parent])) break;
      [h[i], h[parent]] = [h[parent], h[i]];
      i = parent;
    }
    return e;
  }

  private dropCancelled(): void {
    while (this.heap.length > 0 && this.heap[0].cancelled) this.pop();
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < h.length && less(h[l], h[m])) m = l;
      if (r < h.length && less(h[r], h[m])) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m], h[i]];
      i = m;
    }
  }
}

function less(a: Entry, b: Entry): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
