// Reads Higress's proxy_get_upstream_hosts result (higress-abi.md "Upstream host selection"): a
// pair map `ip:port` -> JSON `{"health_status":"Healthy","metrics":"<prometheus text>"}`.
// Works on the raw bytes: only keys and health_status are decoded per request; the metrics text
// (up to 64 KiB per host) stays as a byte range that endpoint_metrics decodes only when it changed.
// Pure: no host calls. Malformed input yields the hosts that could be read.

export class HostEntry {
  constructor(public address: string, public health: string, public valueStart: i32, public valueEnd: i32) {}
}

export class HostSnapshot {
  constructor(public raw: ArrayBuffer, public hosts: HostEntry[]) {}
}

const HEALTH_KEY = "\"health_status\"";

function findBytes(base: usize, start: i32, end: i32, needle: ArrayBuffer): i32 {
  const n = needle.byteLength;
  const p = changetype<usize>(needle);
  const first = load<u8>(p);
  for (let i = start; i + n <= end; i++) {
    if (load<u8>(base + <usize>i) != first) continue;
    if (memory.compare(base + <usize>i, p, n) == 0) return i;
  }
  return -1;
}

function skipSpaces(base: usize, i: i32, end: i32): i32 {
  while (i < end) {
    const c = load<u8>(base + <usize>i);
    if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
    i++;
  }
  return i;
}

/** The health_status string of one JSON value (Envoy's names never need escapes); "" if absent. */
function readHealth(base: usize, start: i32, end: i32, key: ArrayBuffer): string {
  const at = findBytes(base, start, end, key);
  if (at < 0) return "";
  let i = skipSpaces(base, at + key.byteLength, end);
  if (i >= end || load<u8>(base + <usize>i) != 0x3a /* : */) return "";
  i = skipSpaces(base, i + 1, end);
  if (i >= end || load<u8>(base + <usize>i) != 0x22 /* " */) return "";
  const s = i + 1;
  let e = s;
  while (e < end && load<u8>(base + <usize>e) != 0x22) e++;
  if (e >= end) return "";
  return String.UTF8.decodeUnsafe(base + <usize>s, <usize>(e - s));
}

export function parseUpstreamHosts(raw: ArrayBuffer): HostSnapshot {
  const hosts = new Array<HostEntry>();
  const size = raw.byteLength;
  if (size < 4) return new HostSnapshot(raw, hosts);
  const base = changetype<usize>(raw);
  const n = <i32>load<u32>(base);
  if (n < 0 || n > (size - 4) / 8) return new HostSnapshot(raw, hosts);
  const key = String.UTF8.encode(HEALTH_KEY);
  let lens = 4;
  let data = 4 + 8 * n;
  for (let i = 0; i < n; i++) {
    const klen = <i32>load<u32>(base + <usize>lens);
    const vlen = <i32>load<u32>(base + <usize>lens + 4);
    lens += 8;
    // In i64: two lengths near 2^31 (a malformed map) must not wrap their sum below the space left.
    if (klen < 0 || vlen < 0 || <i64>klen + <i64>vlen + 2 > <i64>(size - data)) break;
    const address = String.UTF8.decodeUnsafe(base + <usize>data, <usize>klen);
    const vs = data + klen + 1;
    const ve = vs + vlen;
    hosts.push(new HostEntry(address, readHealth(base, vs, ve, key), vs, ve));
    data = ve + 1;
  }
  return new HostSnapshot(raw, hosts);
}

/**
 * The last snapshot, reused while the host map's bytes are unchanged: Higress hands the whole map
 * to every request (proxy_get_upstream_hosts), and it changes only when hosts or their health
 * (or health-check bodies) change, so a request then costs one byte comparison instead of a parse
 * that allocates two strings per host (10,000 hosts: about 650 KB compared, nothing allocated).
 */
export class SnapshotCache {
  private last: HostSnapshot | null = null;

  read(raw: ArrayBuffer): HostSnapshot {
    const prev = this.last;
    if (prev !== null && prev.raw.byteLength == raw.byteLength &&
      memory.compare(changetype<usize>(prev.raw), changetype<usize>(raw), <usize>raw.byteLength) == 0) return prev;
    const next = parseUpstreamHosts(raw);
    this.last = next;
    return next;
  }
}

/** A cluster's host map as read at `atMs`. */
class HostRead {
  constructor(public snapshot: HostSnapshot, public atMs: f64) {}
}

/**
 * hostsRefreshMs: the last map read per cluster, reused while it is younger than the refresh
 * interval, so a request then costs one map lookup instead of the host copying the whole map in
 * (O(hosts): 650 KB at 10,000 hosts) and the plugin comparing it.
 */
export class HostMapReads {
  private reads: Map<string, HostRead> = new Map();

  /** The cluster's map if read less than `refreshMs` ago (a clock going back counts as old). */
  fresh(cluster: string, nowMs: f64, refreshMs: f64): HostSnapshot | null {
    if (!this.reads.has(cluster)) return null;
    const last = this.reads.get(cluster);
    return nowMs - last.atMs < refreshMs && nowMs >= last.atMs ? last.snapshot : null;
  }

  /** Keeps `snapshot` as the cluster's map read at `nowMs`. A new cluster first drops the maps
   *  read `refreshMs` or more ago (never returned again by fresh(); each holds a whole host map),
   *  so the reads of clusters no longer routed to (a configuration's clusters come and go) go. */
  store(cluster: string, snapshot: HostSnapshot | null, nowMs: f64, refreshMs: f64 = 0): void {
    if (snapshot === null) { this.reads.delete(cluster); return; }
    if (refreshMs > 0 && !this.reads.has(cluster)) {
      const keys = this.reads.keys();
      for (let i = 0; i < keys.length; i++) {
        const at = this.reads.get(keys[i]).atMs;
        if (nowMs - at >= refreshMs) this.reads.delete(keys[i]);
      }
    }
    this.reads.set(cluster, new HostRead(snapshot, nowMs));
  }

  /** Clusters whose map is kept. */
  get size(): i32 { return this.reads.size; }
}
