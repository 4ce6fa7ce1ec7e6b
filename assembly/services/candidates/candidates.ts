// The candidate set of a request: hosts of the routed cluster whose health status is allowed
// (Higress: only "Healthy"), or the configured static list (stock Envoy, no Higress ABI).
// Sorted, with a fingerprint that names the set in Redis (acquire.lua's `cand:<fp>` key), cached
// per VM so an unchanged host list costs one comparison of keys and health, not a sort + hash.
import { fnv1a64Hex } from "../../util/fnv";
import { HostSnapshot } from "./upstream_hosts";

export class CandidateSet {
  constructor(public hosts: string[], public fp: string) {}
  get size(): i32 { return this.hosts.length; }
  // Built on first use: a set is reused for many requests (CandidateCache), and a hash lookup
  // costs the same at 10 and at 10,000 hosts (a binary search of strings grew 2.3x).
  private index: Map<string, i32> | null = null;

  has(address: string): bool { return this.indexOf(address) >= 0; }

  /** The position of `address` in `hosts`, or -1. */
  indexOf(address: string): i32 {
    let index = this.index;
    if (index === null) {
      index = new Map<string, i32>();
      for (let i = 0; i < this.hosts.length; i++) if (!index.has(this.hosts[i])) index.set(this.hosts[i], i);
      this.index = index;
    }
    return index.has(address) ? index.get(address) : -1;
  }
}

export function makeCandidateSet(hosts: string[]): CandidateSet {
  const sorted = hosts.slice(0);
  sorted.sort((a: string, b: string): i32 => (a < b ? -1 : a > b ? 1 : 0));
  // Drop duplicates (a static list may repeat a host).
  const unique = new Array<string>();
  for (let i = 0; i < sorted.length; i++) {
    if (i == 0 || sorted[i] != sorted[i - 1]) unique.push(sorted[i]);
  }
  return new CandidateSet(unique, fnv1a64Hex(unique.join(",")));
}

export class CandidateCache {
  private lastKey: string = "\u0000";
  private last: CandidateSet = new CandidateSet([], "");
  private lastSnapshot: HostSnapshot | null = null;

  fromSnapshot(snapshot: HostSnapshot, allowed: string[]): CandidateSet {
    // The same snapshot object (SnapshotCache: unchanged host map) gives the same set.
    if (snapshot === this.lastSnapshot) return this.last;
    this.lastSnapshot = snapshot;
    const picked = new Array<string>();
    for (let i = 0; i < snapshot.hosts.length; i++) {
      const h = snapshot.hosts[i];
      if (allowed.includes(h.health)) picked.push(h.address);
    }
    const key = picked.join(",");
    if (key == this.lastKey) return this.last;
    this.lastKey = key;
    this.last = makeCandidateSet(picked);
    return this.last;
  }
}
