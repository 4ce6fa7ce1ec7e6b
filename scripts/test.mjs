// npm test: build the plugin, type-check the TypeScript (tsc --noEmit: host, tests, benches), run
// the as-pect specs (plugin logic compiled to Wasm) and the vitest suites (host, gateway, Lua,
// simulator, end to end), then print one closing line "Tests: N passed, M failed" that counts
// both (a type error counts as one failure). Exits non-zero when anything failed.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const extra = process.argv.slice(2);

function run(cmd, args, capture = false) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: capture ? ["ignore", "pipe", "inherit"] : "inherit", encoding: "utf8" });
  if (capture) process.stdout.write(r.stdout ?? "");
  return r;
}

const build = run(process.execPath, [join(root, "scripts/build.mjs")]);
if (build.status !== 0) {
  console.log("Tests: 0 passed, 1 failed");
  process.exit(1);
}

const typecheck = run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", "tsconfig.json"]);
const typeFailed = typecheck.status === 0 ? 0 : 1;
if (typeFailed) console.log("typecheck (tsc --noEmit) failed: see the errors above");

const asp = run(process.execPath, [join(root, "node_modules/@as-pect/cli/bin/asp.js"), "--config", "as-pect.config.js", "--no-logo"], true);
const plain = (asp.stdout ?? "").replace(/\u001b\[[0-9;]*m/g, "");
const m = plain.match(/\[Tests\]:\s*(\d+)\s*\/\s*(\d+)/);
const aspPassed = m ? Number(m[1]) : 0;
const aspFailed = m ? Number(m[2]) - Number(m[1]) : 1;
const aspOk = asp.status === 0 && m !== null;

// Fault-injection suites (Redis frozen or stopped, gateways killed, lease expiry on Redis's clock)
// assert recovery within wall-clock bounds; they run after the others, one file at a time, so a
// neighbour's CPU load cannot stretch their timing on a 2-core machine.
const SERIAL = ["test/chaos/", "test/gateway/pick-deadline.test.ts", "test/e2e/multi-gateway.test.ts", "test/lua/healing.test.ts"];
const vitest = join(root, "node_modules/vitest/vitest.mjs");
let vPassed = 0;
let vFailed = 0;
let vitestOk = true;
function runVitest(name, args) {
  const report = join(root, `build/vitest-report-${name}.json`);
  rmSync(report, { force: true });
  const r = run(process.execPath, [vitest, "run", "--reporter=default", "--reporter=json", `--outputFile=${report}`, ...args]);
  if (r.status !== 0) vitestOk = false;
  try {
    const j = JSON.parse(readFileSync(report, "utf8"));
    vPassed += j.numPassedTests;
    // A failed test also fails its file and describe blocks: count suites only when no test failed
    // (a file that could not be collected), so one failed test reads "1 failed", not 3.
    vFailed += j.numFailedTests > 0 ? j.numFailedTests : (j.numFailedTestSuites ?? 0);
  } catch {
    vFailed += 1;
  }
}
if (extra.length > 0) {
  runVitest("all", extra);
} else {
  runVitest("parallel", SERIAL.flatMap((s) => ["--exclude", s.endsWith("/") ? `${s}**` : s]));
  runVitest("serial", ["--no-file-parallelism", ...SERIAL]);
}
const passed = aspPassed + vPassed;
const failed = aspFailed + vFailed + typeFailed + (aspOk ? 0 : aspFailed === 0 ? 1 : 0);
console.log(`\nas-pect: ${aspPassed} passed, ${aspFailed} failed; vitest: ${vPassed} passed, ${vFailed} failed`);
console.log(`Tests: ${passed} passed, ${failed} failed`);
process.exit(failed > 0 || !vitestOk ? 1 : 0);
