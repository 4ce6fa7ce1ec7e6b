// Compiles a test guest with asc on demand and caches it in build/test-guests/<name>.wasm, keyed
// by a hash of every guest source (so editing abi.ts rebuilds all). Safe to call from parallel
// test files: output is written to a temp file and renamed into place.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../../..");
const outDir = path.join(root, "build/test-guests");

export type GuestName = "scripted-100" | "scripted-020" | "two-markers" | "unknown-import" | "higress-100" | "init-host-call";

function sourcesHash(): string {
  const h = createHash("sha256");
  for (const f of readdirSync(here).filter((n) => n.endsWith(".ts") && n !== "build.ts").sort()) {
    h.update(f).update(readFileSync(path.join(here, f)));
  }
  return h.digest("hex").slice(0, 16);
}

export async function buildGuest(name: GuestName): Promise<string> {
  mkdirSync(outDir, { recursive: true });
  const out = path.join(outDir, `${name}.wasm`);
  const stamp = `${out}.hash`;
  const hash = sourcesHash();
  if (existsSync(out) && existsSync(stamp) && readFileSync(stamp, "utf8") === hash) return out;
  const tmp = `${out}.${process.pid}.${Date.now()}.tmp`;
  // --runtime stub: no GC needed for short tests; --use abort=: aborts become `unreachable`
  // (Envoy provides no env.abort).
  await run(path.join(root, "node_modules/.bin/asc"), [
    path.join(here, `${name}.ts`), "-o", tmp, "--runtime", "stub", "--use", "abort=", "-O1",
    // Not the plugin's asconfig.json (asc reads ./asconfig.json by default and adds its entries).
    "--config", "scripts/asconfig-standalone.json",
    // Module-level code in `_initialize`, as the plugin is built (asconfig.json exportStart).
    ...(name === "init-host-call" ? ["--exportStart", "_initialize"] : []),
  ], { cwd: root });
  renameSync(tmp, out);
  writeFileSync(stamp, hash);
  return out;
}
