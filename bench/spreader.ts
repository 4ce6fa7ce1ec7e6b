// How clients reach N gateway replicas: like an L4 load balancer, each new connection (here: each
// session, whose turns reuse its connection) goes to one gateway, round robin or seeded random.
// Never fails; a single URL always gets index 0.
import { SeededRandom } from "../host-test/sim/random.js";

export type SpreadMode = "round_robin" | "random";

export class GatewaySpreader {
  private next = 0;
  private readonly rng: SeededRandom;

  constructor(private readonly count: number, private readonly mode: SpreadMode, seed: number) {
    this.rng = new SeededRandom(seed);
  }

  /** Gateway index for a new connection. */
  assign(): number {
    if (this.mode === "random") return this.rng.int(this.count);
    const i = this.next;
    this.next = (this.next + 1) % this.count;
    return i;
  }
}
