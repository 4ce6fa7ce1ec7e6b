// README's links and the paths it names stay inside the repository and exist (no ../ links to
// material a clone does not have).
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";

const FILES = ["README.md", "envoy/README.md"];

it("README links and backticked repository paths exist inside the repository", () => {
  const problems: string[] = [];
  let checked = 0;
  for (const file of FILES) {
    const text = fs.readFileSync(file, "utf8");
    const targets = [...text.matchAll(/\]\(([^)#\s]+)\)/g)].map((m) => m[1]).filter((t) => !/^[a-z]+:/.test(t));
    // Backticked paths that start at a top-level folder of the repository.
    const named = [...text.matchAll(/`((?:bench|envoy|host-test|lua|test|assembly|scripts)\/[\w./-]+)`/g)].map((m) => m[1]).filter((t) => !t.includes("<") && !/\*|-<time>/.test(t));
    for (const t of [...targets, ...named]) {
      const resolved = path.resolve(path.dirname(file), targets.includes(t) ? t : path.relative(path.dirname(file), t));
      checked++;
      if (!resolved.startsWith(process.cwd() + path.sep)) problems.push(`${file}: ${t} points outside the repository`);
      else if (!fs.existsSync(resolved)) problems.push(`${file}: ${t} does not exist`);
    }
    if (/\.\.\/shared|\/work\//.test(text)) problems.push(`${file}: mentions a path outside the repository`);
  }
  expect(problems).toEqual([]);
  expect(checked).toBeGreaterThan(20);
});
