// CLI: `npm run bench -- <scenario> [options]`, `npm run bench -- --list`, `npm run bench:smoke`.
// Load scenarios run in VIRTUAL time by default (bench/virtual/: one discrete-event clock, as fast
// as the CPU allows, reproducible from the seed); --wall runs them through the real HTTP gateway
// paced by the wall clock (the validation path). --redis-rtt-ms X: virtual Redis round trip.
// --capacity: capacity at SLO per policy (scenarios with a capacity spec; bench/capacity.ts);
// --rates a,b,c replaces the scenario's sweep.
// --replicas 1,2,4: the scenario behind N gateway replicas sharing one Redis (bench/virtual/replicas-run.ts).
// Trace replay: `mooncake [--trace FILE] [--trace-speed K] [--pods N] [--max-requests N]`.
// Options: --seed N, --time-scale K (simulated ms per wall ms), --policies a,b,c,
// --lb-config '{"loadGateAbs":4}' (merged into the plugin's lb_config of every plugin policy: sweeps),
// --concurrency N (closed-loop scenarios), --gateways N, --out DIR (default bench/out),
// --quiet (no progress line), --check (exit 1 if a policy was skipped or a request failed; on by
// default for smoke, which CI runs). Custom scenarios get the remaining arguments.
// Builds the plugin first when build/ai-load-balancer.wasm is missing. Prints the Markdown table
// and writes JSON + Markdown + SVG charts under the output directory.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { WASM_PATH } from "./gateway-config.js";
import { isPolicyName, POLICIES, type PolicyName } from "./policies.js";
import { checkProblems, markdownTable, writeReport } from "./report.js";
import { runLoadScenario } from "./run-scenario.js";
import { runVirtualScenario, type VirtualOverrides } from "./virtual/run-virtual.js";
import { capacityTable, runCapacity } from "./virtual/capacity-run.js";
import { replicasTable, runReplicas } from "./virtual/replicas-run.js";
import { findScenario, SCENARIOS } from "./scenarios/index.js";
import { mooncakeScenario, TRACE_SCENARIO, type TraceScenarioOptions } from "./scenarios/trace.js";
import { REPO_ROOT } from "./topology.js";

interface Cli { rates: number[] | undefined; replicas: number[] | null; trace: TraceScenarioOptions; scenario: string | null; list: boolean; check: boolean; wall: boolean; capacity: boolean; out: string; overrides: VirtualOverrides; rest: string[] }

function parseArgs(argv: string[]): Cli {
  const cli: Cli = { rates: undefined, replicas: null, trace: {}, scenario: null, list: false, check: false, wall: false, capacity: false, out: path.join(REPO_ROOT, "bench", "out"), overrides: {}, rest: [] };
  const num = (flag: string, v: string | undefined) => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n) || n <= 0) throw new Error(`${flag} needs a positive number, got ${v}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--list") cli.list = true;
    else if (a === "--check") cli.check = true;
    else if (a === "--wall") cli.wall = true;
    else if (a === "--capacity") cli.capacity = true;
    else if (a === "--rates") cli.rates = (argv[++i] ?? "").split(",").map((v) => num(a, v));
    else if (a === "--replicas") cli.replicas = (argv[++i] ?? "").split(",").map((v) => num(a, v));
    else if (a === "--trace") cli.trace.file = path.resolve(argv[++i] ?? "");
    else if (a === "--trace-speed") cli.trace.speed = num(a, argv[++i]);
    else if (a === "--pods") cli.trace.pods = num(a, argv[++i]);
    else if (a === "--max-requests") cli.trace.maxRequests = num(a, argv[++i]);
    else if (a === "--redis-rtt-ms") {
      const v = Number(argv[++i]);
      if (!(v >= 0)) throw new Error(`--redis-rtt-ms needs a number >= 0, got ${argv[i]}`);
      cli.overrides.redisRttMs = v;
    }
    else if (a === "--quiet") cli.overrides.quiet = true;
    else if (a === "--seed") cli.overrides.seed = num(a, argv[++i]);
    else if (a === "--time-scale") cli.overrides.timeScale = num(a, argv[++i]);
    else if (a === "--concurrency") cli.overrides.concurrency = num(a, argv[++i]);
    else if (a === "--gateways") cli.overrides.gateways = num(a, argv[++i]);
    else if (a === "--out") cli.out = path.resolve(argv[++i] ?? ".");
    else if (a === "--lb-config") {
      const text = argv[++i] ?? "";
      let parsed: unknown;
      try { parsed = JSON.parse(text); } catch { throw new Error(`--lb-config needs a JSON object, got ${text}`); }
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error(`--lb-config needs a JSON object, got ${text}`);
      cli.overrides.lbConfig = parsed as Record<string, unknown>;
    }
    else if (a === "--policies") {
      const names = (argv[++i] ?? "").split(",").filter((n) => n.length > 0);
      const unknown = names.filter((n) => !isPolicyName(n));
      if (unknown.length > 0) throw new Error(`unknown policies: ${unknown.join(", ")}; known: ${Object.keys(POLICIES).join(", ")}`);
      cli.overrides.policies = names as PolicyName[];
    } else if (cli.scenario === null && !a.startsWith("--")) cli.scenario = a;
    else cli.rest.push(a);
  }
  return cli;
}

function listScenarios(): void {
  for (const s of [...SCENARIOS, TRACE_SCENARIO]) console.log(`${s.name.padEnd(16)} ${s.description}`);
}

function ensurePluginBuilt(): void {
  if (fs.existsSync(path.join(REPO_ROOT, WASM_PATH))) return;
  process.stderr.write(`${WASM_PATH} missing: building the plugin (npm run build)\n`);
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: REPO_ROOT, stdio: "inherit" });
}

/** Per-run progress lines on stderr unless --quiet. */
function progressLog(cli: Cli): ((line: string) => void) | undefined {
  return cli.overrides.quiet ? undefined : (line) => process.stderr.write(line + "\n");
}

/** Writes `<out>/<scenario>-<kind>-<time>/<kind>.json` and `.md`, prints the table. */
function writeTable(out: string, scenario: string, kind: string, data: unknown, table: string): void {
  const dir = path.join(out, `${scenario}-${kind}-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${kind}.json`), JSON.stringify(data, null, 1));
  fs.writeFileSync(path.join(dir, `${kind}.md`), table + "\n");
  console.log(table);
  console.log(`report: ${path.relative(process.cwd(), dir)}/`);
}

async function main(): Promise<number> {
  const cli = parseArgs(process.argv.slice(2));
  if (cli.list || cli.scenario === null) {
    listScenarios();
    return cli.list ? 0 : 2;
  }
  const scenario = cli.scenario === TRACE_SCENARIO.name ? mooncakeScenario(cli.trace) : findScenario(cli.scenario);
  if (!scenario) {
    console.error(`unknown scenario "${cli.scenario}"; --list shows them`);
    return 2;
  }
  if (scenario.kind === "custom") {
    // A custom scenario reads its own options (--policies, --wall, --seeds...): all but the name.
    await scenario.run(process.argv.slice(2).filter((a) => a !== cli.scenario));
    return 0;
  }
  ensurePluginBuilt();
  if (cli.replicas) {
    const points = await runReplicas(scenario, cli.replicas, cli.overrides, progressLog(cli));
    writeTable(cli.out, scenario.name, "replicas", points, replicasTable(points));
    return 0;
  }
  if (cli.capacity) {
    if (cli.wall) throw new Error("--capacity runs in virtual time only");
    const cap = await runCapacity(scenario, { ...cli.overrides, rates: cli.rates }, progressLog(cli));
    writeTable(cli.out, scenario.name, "capacity", cap, capacityTable(cap));
    return 0;
  }
  const report = cli.wall ? await runLoadScenario(scenario, cli.overrides) : await runVirtualScenario(scenario, cli.overrides);
  const written = writeReport(report, cli.out);
  console.log(markdownTable(report));
  console.log(`report: ${path.relative(process.cwd(), written.dir)}/ (${written.files.map((f) => path.basename(f)).join(", ")})`);
  const problems = cli.check || scenario.name === "smoke" ? checkProblems(report) : [];
  for (const p of problems) console.error(`check failed: ${p}`);
  return problems.length > 0 ? 1 : 0;
}

main().then((code) => process.exit(code), (e: unknown) => {
  console.error(`bench: ${(e as Error).stack ?? String(e)}`);
  process.exit(1);
});
