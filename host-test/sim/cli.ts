// Runs a simulated fleet from the command line and prints one URL per pod:
//   tsx host-test/sim/cli.ts --pods 4 --profile tiny --base-port 8001 --time-scale 10
// Options: --pods N (1), --profile NAME (tiny), --base-port P (0 = free ports), --time-scale X (1),
// --model NAME, --lora a,b, --flavor vllm|sglang, --seed N.
// Failure behaviour: a bad option prints usage and exits 2; Ctrl-C, SIGTERM or the death of
// its launcher closes the fleet.
import { parseArgs } from "node:util";
import { stopOnExitSignals } from "../cli/lifecycle.js";
import { startSimFleet } from "./fleet.js";
import { PROFILES } from "./profiles.js";

const USAGE = `usage: tsx host-test/sim/cli.ts [--pods N] [--profile ${Object.keys(PROFILES).join("|")}] [--base-port P] [--time-scale X] [--model NAME] [--lora a,b] [--flavor vllm|sglang] [--seed N]`;

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

function positiveNumber(raw: string | undefined, flag: string, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) fail(`${flag} must be a number >= 0, got "${raw}"`);
  return value;
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        pods: { type: "string" },
        profile: { type: "string" },
        "base-port": { type: "string" },
        "time-scale": { type: "string" },
        model: { type: "string" },
        lora: { type: "string" },
        flavor: { type: "string" },
        seed: { type: "string" },
        help: { type: "boolean" },
      },
    }));
  } catch (error) {
    fail((error as Error).message);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const profile = values.profile ?? "tiny";
  if (!PROFILES[profile]) fail(`unknown profile "${profile}"`);
  const flavor = values.flavor ?? "vllm";
  if (flavor !== "vllm" && flavor !== "sglang") fail(`--flavor must be vllm or sglang, got "${flavor}"`);
  const timeScale = positiveNumber(values["time-scale"], "--time-scale", 1);
  if (timeScale === 0) fail("--time-scale must be > 0");
  const fleet = await startSimFleet(Math.max(1, Math.floor(positiveNumber(values.pods, "--pods", 1))), {
    profile,
    basePort: positiveNumber(values["base-port"], "--base-port", 0),
    timeScale,
    modelName: values.model,
    loraAdapters: values.lora ? values.lora.split(",").filter(Boolean) : [],
    flavor,
    seed: positiveNumber(values.seed, "--seed", 1),
  });
  for (const pod of fleet.pods) console.log(`${pod.name} ${pod.url}`);
  console.log(`model ${values.model ?? PROFILES[profile].modelName}, profile ${profile}, time-scale ${timeScale} (latencies in /metrics are simulated)`);
  stopOnExitSignals(() => fleet.close()); // also when npx/tsx above it dies: no orphan fleet
}

void main();
