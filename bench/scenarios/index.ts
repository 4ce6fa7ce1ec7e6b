// Every scenario `npm run bench -- <name>` knows, in listing order.
import { llmd73 } from "./llmd.js";
import { hotPrefix, lowSharing, multiTurn, sharedPrefix } from "./inference-perf.js";
import { hashCost, luaPick, parseCost, pluginLatency } from "./micro.js";
import { blog, galileo, higress, photoroom } from "./seeds.js";
import { smoke } from "./smoke.js";
import { sloBurst, sloHetero } from "./slo.js";
import type { Scenario } from "./types.js";

export const SCENARIOS: readonly Scenario[] = [
  smoke, llmd73, sharedPrefix, multiTurn, photoroom, galileo, higress, blog, lowSharing, hotPrefix,
  luaPick, hashCost, parseCost, pluginLatency, sloHetero, sloBurst,
];

export function findScenario(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}
