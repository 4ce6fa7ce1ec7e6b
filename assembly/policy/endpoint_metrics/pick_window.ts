// rate_limit bookkeeping: the last `capacity` picks within `windowMs` (Higress's sliding window:
// 100 picks, 60 s). A host whose share of the window exceeds rate_limit is not picked again
// until its share falls. Hosts are stored as 32-bit folds of FNV-1a hashes so the window has a fixed,
// small binary form that VMs share through shared data (see shared_picks.ts).
// Failure behaviour: never throws; decode() of a malformed buffer yields an empty window. Pure.
import { fnv1a64 } from "../../util/fnv";

const ENTRY_BYTES = 12; // f64 time + u32 host hash

export function hostKey(address: string): u32 {
  const h = fnv1a64(address);
  return <u32>h ^ <u32>(h >> 32);
}

export class PickWindow {
  times: f64[] = [];
  hosts: u32[] = [];

  constructor(public capacity: i32, public windowMs: f64) {}

  /** Drops entries older than the window (entries are in time order). */
  purge(now: f64): void {
    const cutoff = now - this.windowMs;
    let drop = 0;
    while (drop < this.times.length && this.times[drop] < cutoff) drop++;
    if (drop > 0) {
      this.times = this.times.slice(drop);
      this.hosts = this.hosts.slice(drop);
    }
  }

  size(now: f64): i32 {
    this.purge(now);
    return this.times.length;
  }

  count(address: string, now: f64): i32 {
    this.purge(now);
    const k = hostKey(address);
    let n = 0;
    for (let i = 0; i < this.hosts.length; i++) if (this.hosts[i] == k) n++;
    return n;
  }

  /** Share of the window taken by `address` (0 for an empty window). */
  share(address: string, now: f64): f64 {
    const size = this.size(now);
    return size == 0 ? 0 : <f64>this.count(address, now) / <f64>size;
  }

  /** Higress's test: the share strictly above the limit. */
  overLimit(address: string, limit: f64, now: f64): bool {
    return limit < 1.0 && this.share(address, now) > limit;
  }

  push(address: string, now: f64): void {
    this.times.push(now);
    this.hosts.push(hostKey(address));
    this.purge(now);
    const excess = this.times.length - this.capacity;
    if (excess > 0) {
      this.times = this.times.slice(excess);
      this.hosts = this.hosts.slice(excess);
    }
  }

  encode(): ArrayBuffer {
    const n = this.times.length;
    const buf = new ArrayBuffer(n * ENTRY_BYTES);
    const base = changetype<usize>(buf);
    for (let i = 0; i < n; i++) {
      store<f64>(base + <usize>(i * ENTRY_BYTES), this.times[i]);
      store<u32>(base + <usize>(i * ENTRY_BYTES + 8), this.hosts[i]);
    }
    return buf;
  }

  /** Replaces the content with a buffer produced by encode(). */
  decode(buf: ArrayBuffer): void {
    this.times = [];
    this.hosts = [];
    if (buf.byteLength % ENTRY_BYTES != 0) return;
    const n = buf.byteLength / ENTRY_BYTES;
    const base = changetype<usize>(buf);
    for (let i = 0; i < n; i++) {
      this.times.push(load<f64>(base + <usize>(i * ENTRY_BYTES)));
      this.hosts.push(load<u32>(base + <usize>(i * ENTRY_BYTES + 8)));
    }
  }
}
