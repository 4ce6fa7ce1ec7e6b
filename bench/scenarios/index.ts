// Every scenario `npm run bench -- <name>` knows, in listing order.
import { llmd73, llmdCapacity } from "./llmd.js";
import { hotPrefix, lowSharing, multiTurn, sharedPrefix } from "./inference-perf.js";
import { calibrate, hashCost, holdPass, luaPick, parseCost, pluginLatency, redisOutage, requestCost, shareCost, soakMemory } from "./micro.js";
import { blog, galileo, galileoUnbatched, higress, photoroom } from "./seeds.js";
import { smoke } from "./smoke.js";
import { photoroom10x20, photoroom8x64 } from "./scale.js";
import { sloBurst, sloHetero } from "./slo.js";
import type { Scenario } from "./types.js";

export const SCENARIOS: readonly Scenario[] = [
  smoke, llmd73, llmdCapacity, sharedPrefix, multiTurn, photoroom, photoroom10x20, photoroom8x64, galileo, galileoUnbatched, higress, blog, lowSharing, hotPrefix,
  luaPick, hashCost, parseCost, pluginLatency, soakMemory, holdPass, shareCost, requestCost, calibrate, sloHetero, sloBurst, redisOutage,
];

export function findScenario(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}
