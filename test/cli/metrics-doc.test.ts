// README's metrics table names exactly the metrics the plugin defines (host.defineMetric calls in
// assembly/): a metric added without a row, or a row left for a metric gone, fails here.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return f === "__tests__" || f === "generated" ? [] : sources(p);
    return f.endsWith(".ts") ? [p] : [];
  });
}

it("README's metrics table lists every metric the plugin defines, and nothing else", () => {
  const defined = new Set<string>();
  for (const file of sources("assembly")) {
    const text = readFileSync(file, "utf8");
    for (const call of text.matchAll(/defineMetric\([^;]*?"(llmlb_[a-z_]+)"\)/g)) defined.add(call[1]);
  }
  expect(defined.size).toBeGreaterThan(10);
  const documented = new Set([...readFileSync("README.md", "utf8").matchAll(/^\| `(llmlb_[a-z_]+)` \| (counter|gauge|histogram) \|/gm)].map((m) => m[1]));
  expect([...documented].sort()).toEqual([...defined].sort());
});
