// How long a new request waits for a batch slot on a full engine (pure, no host calls): the
// engine runs at most `slots` requests and admits waiting ones FCFS as running ones end, so the
// wait is a list schedule of the open streams. Streams already producing tokens hold a slot until
// their remaining decode ends; streams not started yet (in pick order) take a free slot at once
// (their remaining time counted from now) or queue for the earliest one to free (their whole
// service time); the newcomer gets the earliest slot after all of them. Only the p + 1 earliest
// slot times can matter with p streams pending (each pending stream, then the newcomer, takes the
// earliest; a slot it frees again is later than the one it took), so the schedule runs on those:
// O(streams x log(p + 1)) when the streams fill the slots, 0 at once otherwise. Never throws.

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
  const width = max(slots, busy.length);
  let free = width - busy.length;
  // The k earliest slot times (free slots first, at 0); `scratch` (reused by the caller) spares
  // an allocation per candidate.
  const k = min(width, pending + 1);
  const times = scratch !== null ? scratch : new Array<f64>(0);
  smallest(busy, k - min(free, k), times);
  for (let i = 0; i < min(free, k); i++) times.push(0.0);
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

/** The m smallest of `v` (negatives as 0) into `out`, unordered: a max-heap of m, O(n log m). */
function smallest(v: f64[], m: i32, out: f64[]): void {
  out.length = 0;
  if (m <= 0) return;
  const len = v.length;
  if (m >= len) { // all of them: no selection
    for (let i = 0; i < len; i++) out.push(max(0.0, unchecked(v[i])));
    return;
  }
  for (let i = 0; i < len; i++) {
    const x = max(0.0, unchecked(v[i]));
    if (out.length < m) {
      out.push(x);
      // Sift up through a hole.
      let c = out.length - 1;
      while (c > 0) {
        const p = (c - 1) >> 1;
        const pv = unchecked(out[p]);
        if (pv >= x) break;
        unchecked(out[c] = pv);
        c = p;
      }
      unchecked(out[c] = x);
    } else if (x < unchecked(out[0])) {
      // Replace the largest and sift down through a hole.
      const n = out.length;
      let c = 0;
      while (true) {
        const l = 2 * c + 1;
        if (l >= n) break;
        const r = l + 1;
        let g = l;
        let gv = unchecked(out[l]);
        if (r < n) {
          const rv = unchecked(out[r]);
          if (rv > gv) { g = r; gv = rv; }
        }
        if (gv <= x) break;
        unchecked(out[c] = gv);
        c = g;
      }
      unchecked(out[c] = x);
    }
  }
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
