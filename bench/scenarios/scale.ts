// Scale, in virtual time (the wall-clock path cannot run these on 2 cores):
// - photoroom-10x20: Photoroom's own fleet, 10 gateways x 20 pods of 4 seats, uniform ~1 s
//   requests (in 128 / out 135 tokens on the 8B/H100 profile: ~0.98 s at batch 4), Poisson at 90%
//   of the fleet's capacity (4 seats / 0.98 s x 20 pods = 81.6 req/s), sessions spread randomly
//   over the gateways like an L4 balancer.
// - photoroom-8x64: the same pods and load factor, 8 gateways x 64 pods.
// Published (Photoroom): 10 x 20 with per-gateway least request p90 7 s / p99 > 20 s; the global
// view p99 ~2 s.
import { photoroomWorkload } from "../workloads/seeds.js";
import type { LoadScenario } from "./types.js";

const SEATS = 4;
const REQUEST_S = 0.98;
const LOAD = 0.9;

function photoroomAt(name: string, gateways: number, pods: number, seconds: number): LoadScenario {
  const rate = Math.round(10 * LOAD * (SEATS / REQUEST_S) * pods) / 10;
  return {
    kind: "load",
    name,
    description: `Photoroom at scale: ${gateways} gateways x ${pods} pods (${SEATS} seats), ~1 s requests (in 128 / out 135), Poisson ${rate} req/s (${100 * LOAD}% load).`,
    topology: { pods, profile: "llama-8b-h100", profileOverrides: { maxNumSeqs: SEATS }, timeScale: 1, gateways },
    workload: (seed) => photoroomWorkload(Math.ceil(rate * seconds * 1.05) + 10, seed, 128, 135),
    load: { mode: "stages", arrivals: "poisson", stages: [{ rate, durationMs: seconds * 1000 }] },
    policies: ["round_robin", "least_request", "global_least_request", "omniscient"],
    spread: "random",
    slo: { e2eMs: 2000 },
    maxWallMs: seconds * 1000 + 60_000,
    parameters: { loadFactor: LOAD, rate, published: "10 gateways x 20 pods: local least request p90 7 s / p99 > 20 s; global p99 ~2 s" },
  };
}

export const photoroom10x20 = photoroomAt("photoroom-10x20", 10, 20, 60);
export const photoroom8x64 = photoroomAt("photoroom-8x64", 8, 64, 40);
