// How long a new request waits for a batch slot on a full engine (pure, no host calls): the
// engine runs at most `slots` requests and admits waiting ones FCFS as running ones end, so the
// wait is a list schedule of the open streams. Streams already producing tokens hold a slot until
// their remaining decode ends; streams not started yet (in pick order) take a free slot at once
// (their remaining time counted from now) or queue for the earliest one to free (their whole
// service time); the newcomer gets the earliest slot after all of them. The slot free times are a
// min-heap built in O(streams); each pending stream takes its minimum: O(streams x log slots) when
// the streams fill the slots, 0 at once otherwise. Never throws.

/** Puts x at v[i] of the min-heap v (slot free times, ms from now) and sifts it down through a
 *  hole (children move up, x is written once). */
function siftDown(v: f64[], i: i32, x: f64): void {
  const n = v.length;
  while (true) {
    const l = 2 * i + 1;
    if (l >= n) break;
    const r = l + 1;
    let c = l;
    let cv = unchecked(v[l]);
    if (r < n) {
      const rv = unchecked(v[r]);
      if (rv < cv) { c = r; cv = rv; }
    }
    if (cv >= x) break;
    unchecked(v[i] = cv);
    i = c;
  }
  unchecked(v[i] = x);
}

/**
 * ms until a newcomer gets one of `slots` batch slots. `busy`: remaining ms of the streams
 * holding a slot (started; more of them than slots means the engine has more slots, so all
 * count). `pendingNow` / `pendingService` (same length, pick order): for each stream not started
 * yet, its remaining ms if it holds a slot now, and its whole service ms if it must wait for
 * one. 0 when fewer streams than slots; slots <= 0: 0 (unknown engine). Negative inputs count as 0.
 */
export function slotWait(busy: f64[], pendingNow: f64[], pendingService: f64[], slots: i32, scratch: f64[] | null = null): f64 {
  if (slots <= 0) return 0;
  const pending = min(pendingNow.length, pendingService.length);
  if (busy.length + pending < slots) return 0;
  let free = max(slots, busy.length) - busy.length;
  // Every slot's free time (the busy ones', then the free ones' at 0); `scratch` (reused by the
  // caller) spares an allocation per candidate.
  const times = scratch !== null ? scratch : new Array<f64>(0);
  times.length = 0;
  for (let i = 0; i < busy.length; i++) times.push(max(0.0, unchecked(busy[i])));
  for (let i = 0; i < free; i++) times.push(0.0);
  for (let i = (times.length >> 1) - 1; i >= 0; i--) siftDown(times, i, unchecked(times[i]));
  if (times.length == 0) return 0;
  // j < pending <= both lengths: unchecked reads are in bounds.
  for (let j = 0; j < pending; j++) {
    if (free > 0) {
      // A free slot (time 0, the heap's minimum): this stream holds it from now.
      siftDown(times, 0, max(0.0, unchecked(pendingNow[j])));
      free--;
    } else {
      siftDown(times, 0, unchecked(times[0]) + max(0.0, unchecked(pendingService[j])));
    }
  }
  return times[0];
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
