// One clock for every VM of the Envoy. Each VM's clock ignores the wall clock's backward steps
// (mono_clock.ts) from when it starts, so after a step back of D the VMs running then stay D
// ahead of the wall clock, while a VM started later (a worker recovered from a crash, a new plugin
// image on the same vm_id) reads the plain wall clock: times one VM writes into shared data (scrape
// claims, metrics reports, sibling records) would be off by D for another, for as long as the
// process lives (a claim "D in the future" stopped every scrape; a dead VM's record looked fresh).
// So each VM publishes how far ahead it runs (the largest offset any VM saw, one shared-data key,
// written with CAS) and adopts a larger one it finds: on configuration and every full tick. A VM
// adopting moves forward at once, never back. Failure behaviour: never throws; an unreadable or
// absurd value is ignored.
import * as host from "./calls";

const KEY = "llmlb.clockoffset.v1";
/** An offset above this (a year) is not one a VM saw: ignored. */
const MAX_OFFSET_MS: f64 = 365 * 86400000;

export function syncClockOffset(): void {
  host.nowMillis(); // a reading now: the offset includes any step since the last one
  const mine = host.clockOffset();
  const cur = host.getSharedData(KEY);
  let shared: f64 = 0;
  let cas: u32 = 0;
  if (cur.status == host.Status.Ok) {
    cas = cur.cas;
    if (cur.value.byteLength == 8) {
      const v = load<f64>(changetype<usize>(cur.value));
      if (isFinite(v) && v >= 0 && v <= MAX_OFFSET_MS) shared = v;
    }
  }
  if (shared > mine) { host.adoptClockOffset(shared); return; }
  if (mine > shared && mine <= MAX_OFFSET_MS) {
    const value = new ArrayBuffer(8);
    store<f64>(changetype<usize>(value), mine);
    host.setSharedData(KEY, value, cas); // a CasMismatch: another VM wrote; the next sync reads it
  }
}
