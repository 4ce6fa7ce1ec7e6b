// Bench-only AssemblyScript entry for the plugin's per-request host-map path as it runs now
// (services/candidates: SnapshotCache + CandidateCache), compiled by bench/micro/costs.ts for the
// current tree only (the module did not exist before, so no --baseline row); candidatesRefreshed
// is the same request with hostsRefreshMs > 0.
import { CandidateCache } from "../../assembly/services/candidates/candidates";
import { HostMapReads, SnapshotCache } from "../../assembly/services/candidates/upstream_hosts";

let input: Uint8Array = new Uint8Array(0);
const snapshots = new SnapshotCache();
const candidates = new CandidateCache();
const HEALTHY: string[] = ["Healthy"];

export function inputBuffer(len: i32): usize {
  input = new Uint8Array(len);
  return input.dataStart;
}

export function inputReady(): void {}

const reads = new HostMapReads();
const CLUSTER = "outbound|8000||vllm.static";

/** One request's candidate work with an unchanged host map: a fresh copy of the map arrives
 *  (as proxy_get_upstream_hosts returns it), is compared with the last one, and the cached
 *  candidate set is returned. */
export function candidatesCached(iterations: i32): i32 {
  let size = 0;
  for (let i = 0; i < iterations; i++) {
    const raw = input.buffer.slice(input.byteOffset, input.byteOffset + input.byteLength);
    size += candidates.fromSnapshot(snapshots.read(raw), HEALTHY).size;
  }
  return size;
}

/** The same request with hostsRefreshMs (the map was read less than the interval ago): the map
 *  lookup, the cached candidate set, and the membership test of the picked host (binary search). */
export function candidatesRefreshed(iterations: i32): i32 {
  let size = 0;
  const raw = input.buffer.slice(input.byteOffset, input.byteOffset + input.byteLength);
  reads.store(CLUSTER, snapshots.read(raw), 0);
  for (let i = 0; i < iterations; i++) {
    const snap = reads.fresh(CLUSTER, 1.0, 1000.0);
    if (snap === null) return -1;
    const set = candidates.fromSnapshot(snap, HEALTHY);
    if (set.size > 0 && set.has(set.hosts[i % set.size])) size++;
  }
  return size;
}
