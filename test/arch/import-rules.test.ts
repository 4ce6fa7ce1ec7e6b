// The import rules of .dependency-cruiser.cjs hold: no import circle in assembly/ or host-test/,
// and the plugin's layers import only downward (assembly/README.md). The fixtures prove the
// checks fail on a circle and on an upward import written in AssemblyScript syntax.
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cruise, type IReporterOutput } from "dependency-cruiser";
import { afterAll, describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const rules = createRequire(import.meta.url)(path.join(root, ".dependency-cruiser.cjs"));

/** The violations as "rule: from -> to" (one per circle), cruising `dirs` from `cwd`. */
async function violations(cwd: string, dirs: string[]): Promise<string[]> {
  const before = process.cwd();
  process.chdir(cwd);
  try {
    const r: IReporterOutput = await cruise(dirs, { ...rules.options, validate: true, ruleSet: { forbidden: rules.forbidden } });
    if (typeof r.output === "string") throw new Error("unexpected string output");
    return r.output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
  } finally {
    process.chdir(before);
  }
}

const tmp = mkdtempSync(path.join(tmpdir(), "llmlb-imports-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function fixture(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmp, "f-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe("import rules", () => {
  it("catch a circle and an upward import between AssemblyScript files (decorators, casts)", async () => {
    const dir = fixture({
      "assembly/policy/a.ts": 'import { b } from "../filter/b";\n@inline export function a(x: u32): u32 { return <u32>b(x) + 1; }\n',
      "assembly/filter/b.ts": 'import { a } from "../policy/a";\nexport function b(x: u32): i64 { return <i64>(x > 3 ? a(x - 1) : x); }\n',
    });
    expect(await violations(dir, ["assembly"])).toEqual([
      "no-circular: assembly/filter/b.ts -> assembly/policy/a.ts",
      "no-upward-import: assembly/policy/a.ts -> assembly/filter/b.ts",
    ]);
  });

  it("allow a circle through `import type` only (erased by tsc), not a value one", async () => {
    const dir = fixture({
      "host-test/a.ts": 'import type { B } from "./b.js";\nexport class A { b: B | null = null; }\n',
      "host-test/b.ts": 'import { A } from "./a.js";\nexport class B extends A {}\n',
      "host-test/c.ts": 'import { D } from "./d.js";\nexport class C { d = new D(); }\n',
      "host-test/d.ts": 'import { C } from "./c.js";\nexport class D { make(): C { return new C(); } }\n',
    });
    expect(await violations(dir, ["host-test"])).toEqual([
      "no-circular: host-test/c.ts -> host-test/d.ts",
    ]);
  });

  it("hold for assembly/ and host-test/", async () => {
    expect(await violations(root, ["assembly", "host-test"])).toEqual([]);
  });
});
