// Late binding's free-host lists for one pass over the held requests: for each candidate set,
// the hosts with a free batch slot by the in-flight tracker's counts and the pass's plan (the
// held requests kept so far, by host). Made on first use in a pass and kept current as the pass
// plans or sends requests (a host leaves its list once full), so a pass checks a held request
// with one lookup instead of a count per candidate. Counts come from a HostQueue the policy gives.
// No host calls.
import { Pool } from "../../services/lease/pool";
import { CandidateSet } from "../../services/candidates/candidates";

/** Requests in flight on a host of a pool plus the plan's ones waiting for it (none: no plan). */
export abstract class HostQueue {
  abstract at(pool: Pool | null, address: string, ahead: Map<string, f64> | null): f64;
}

class FreeHosts {
  hosts: string[] = [];
  constructor(public pool: Pool | null) {}
}

export class PassFree {
  // Keyed by the candidate set itself: requests of an unchanged host list share one (CandidateCache).
  private lists: Map<usize, FreeHosts> = new Map();

  /** `slots`: the engines' batch slots (a host is free below them). */
  constructor(private queue: HostQueue, private slots: f64) {}

  /** A new pass: the lists are made again on first use. */
  clear(): void { this.lists.clear(); }

  /** Whether a host of `c` has fewer requests than slots (in flight plus planned). */
  any(pool: Pool | null, c: CandidateSet, ahead: Map<string, f64>): bool {
    const key = changetype<usize>(c);
    if (!this.lists.has(key)) {
      const free = new FreeHosts(pool);
      for (let i = 0; i < c.size; i++) if (this.queue.at(pool, c.hosts[i], ahead) < this.slots) free.hosts.push(c.hosts[i]);
      this.lists.set(key, free);
    }
    return this.lists.get(key).hosts.length > 0;
  }

  /** A request was planned on, or sent to, `address` of `pool`: it leaves the lists once full. */
  taken(pool: Pool | null, address: string, ahead: Map<string, f64>): void {
    const lists = this.lists.values();
    for (let k = 0; k < lists.length; k++) {
      const free = lists[k];
      if (free.pool !== pool) continue;
      const at = free.hosts.indexOf(address);
      if (at >= 0 && this.queue.at(pool, address, ahead) >= this.slots) free.hosts.splice(at, 1);
    }
  }
}
