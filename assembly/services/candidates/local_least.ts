// Per-VM least request over the candidates: the fallback while Redis is unavailable (and the
// behaviour of Envoy's own least-request LB, which only sees one gateway's requests).
// Ties are broken uniformly at random. Pure: the random source is passed in.
import { Xorshift } from "../../util/prng";
import { CandidateSet } from "./candidates";

export class LocalLeastRequest {
  private inflight: Map<string, i64> = new Map();

  load(host: string): i64 { return this.inflight.has(host) ? this.inflight.get(host) : 0; }

  pick(c: CandidateSet, rng: Xorshift): string {
    let best = "";
    let bestLoad: i64 = i64.MAX_VALUE;
    let ties: u32 = 0;
    for (let i = 0; i < c.hosts.length; i++) {
      const h = c.hosts[i];
      const l = this.load(h);
      if (l < bestLoad) { best = h; bestLoad = l; ties = 1; }
      else if (l == bestLoad) { ties++; if (rng.nextBelow(ties) == 0) best = h; }
    }
    return best;
  }

  acquire(host: string, cost: i64): void { this.inflight.set(host, this.load(host) + cost); }

  release(host: string, cost: i64): void {
    const l = this.load(host) - cost;
    if (l <= 0) this.inflight.delete(host); else this.inflight.set(host, l);
  }
}
