// How long a new request waits for a batch slot on a full engine (pure, no host calls): the
// engine runs at most `slots` requests and admits waiting ones FCFS as running ones end, so the
// wait is a list schedule of the open streams. Streams already producing tokens hold a slot until
// their remaining decode ends; streams not started yet (in pick order) take a free slot at once
// (their remaining time counted from now) or queue for the earliest one to free (their whole
// service time); the newcomer gets the earliest slot after all of them. Cost: O(slots + streams
// x log slots) only when the streams fill the slots (0 at once otherwise). Never throws.

/** Min-heap of slot free times (ms from now), in place in a plain array. */
class SlotHeap {
  v: f64[];
  constructor(times: f64[]) {
    this.v = times;
    for (let i = (times.length >> 1) - 1; i >= 0; i--) this.down(i);
  }
  min(): f64 { return this.v.length > 0 ? this.v[0] : 0.0; }
  /** Replaces the minimum with t (a slot taken until t). */
  replaceMin(t: f64): void {
    if (this.v.length == 0) return;
    this.v[0] = t;
    this.down(0);
  }
  private down(i: i32): void {
    const v = this.v;
    const n = v.length;
    while (true) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const r = l + 1;
      const c = r < n && v[r] < v[l] ? r : l;
      if (v[c] >= v[i]) return;
      const t = v[c]; v[c] = v[i]; v[i] = t;
      i = c;
    }
  }
}

/**
 * ms until a newcomer gets one of `slots` batch slots. `busy`: remaining ms of the streams
 * holding a slot (started; more of them than slots means the engine has more slots, so all
 * count). `pendingNow` / `pendingService` (same length, pick order): for each stream not started
 * yet, its remaining ms if it holds a slot now, and its whole service ms if it must wait for
 * one. 0 when fewer streams than slots; slots <= 0: 0 (unknown engine). Negative inputs count as 0.
 */
export function slotWait(busy: f64[], pendingNow: f64[], pendingService: f64[], slots: i32): f64 {
  if (slots <= 0) return 0;
  const pending = min(pendingNow.length, pendingService.length);
  if (busy.length + pending < slots) return 0;
  const width = max(slots, busy.length);
  const times = new Array<f64>(width).fill(0.0);
  for (let i = 0; i < busy.length; i++) times[i] = max(0.0, busy[i]);
  let free = width - busy.length;
  const heap = new SlotHeap(times);
  for (let j = 0; j < pending; j++) {
    if (free > 0) {
      // A free slot (time 0, the heap's minimum): this stream holds it from now.
      heap.replaceMin(max(0.0, pendingNow[j]));
      free--;
    } else {
      heap.replaceMin(heap.min() + max(0.0, pendingService[j]));
    }
  }
  return heap.min();
}

/**
 * Remaining decode ms of a started stream: `expected` output tokens at `tpot` ms each. Progress:
 * once more than the first token arrived (`seen` SSE events, the last `sinceLastMs` ago), the
 * tokens seen plus those due since the last chunk; before that (or when the body comes in one
 * piece), the tokens due since the first one (`sinceFirstMs`).
 */
export function remainingDecode(expected: f64, seen: f64, sinceFirstMs: f64, sinceLastMs: f64, tpot: f64): f64 {
  if (!(tpot > 0) || !(expected > 1)) return 0;
  const done = seen > 1 ? seen + max(0.0, sinceLastMs) / tpot : 1.0 + max(0.0, sinceFirstMs) / tpot;
  return max(0.0, (expected - done) * tpot);
}
