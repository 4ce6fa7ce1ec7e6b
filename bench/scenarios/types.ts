// What a scenario is: a load scenario (workload + topology + load + the policies to compare),
// run by bench/run-scenario.ts, or a custom one (micro-benchmarks with their own main).
import type { CapacitySlo } from "../capacity.js";
import type { LoadSpec } from "../loadgen.js";
import type { Slo } from "../metrics.js";
import type { PolicyName } from "../policies.js";
import type { SpreadMode } from "../spreader.js";
import type { TopologySpec } from "../topology.js";
import type { Workload } from "../workloads/types.js";

export interface LoadScenario {
  kind: "load";
  name: string;
  description: string;
  topology: Omit<TopologySpec, "seed">;
  workload(seed: number): Workload;
  load: LoadSpec;
  policies: PolicyName[];
  slo?: Slo;
  spread?: SpreadMode;
  /** Per policy run: stop issuing after this many wall ms ... */
  maxWallMs: number;
  /** ... or this many requests. */
  maxRequests?: number;
  /** Shown in the report (sizes, the published numbers this mirrors). */
  parameters: Record<string, unknown>;
  notes?: string[];
  /** Capacity at SLO (`--capacity`): one fresh run per Poisson rate, ascending, then bisection. */
  capacity?: CapacitySpec;
}

export interface CapacitySpec {
  /** Requests per simulated second, ascending. */
  rates: number[];
  /** Simulated ms of arrivals per rate. */
  durationMs: number;
  /** Simulated ms the last requests get to finish (longer than E2E at capacity); later = failed. */
  drainMs: number;
  slo: CapacitySlo;
  /** Bisection steps between the last rate that met the SLO and the first that missed (default 2). */
  bisectSteps?: number;
}

export interface CustomScenario {
  kind: "custom";
  name: string;
  description: string;
  run(args: string[]): Promise<void>;
}

export type Scenario = LoadScenario | CustomScenario;
