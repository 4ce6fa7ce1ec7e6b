// Regenerates the Node-crypto SHA-1 table embedded in assembly/__tests__/sha1.spec.ts, between
// the "BEGIN GENERATED" / "END GENERATED" marker lines, so the AssemblyScript SHA-1 is checked
// against an independent implementation. Inputs are deterministic byte patterns the spec
// rebuilds itself: byte i = (i * mul + add) & 255.
// Usage: node scripts/gen-sha1-vectors.mjs   (exits non-zero if the markers are missing)
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";

const SPEC = new URL("../assembly/__tests__/sha1.spec.ts", import.meta.url);

function pattern(length, mul, add) {
  const b = Buffer.alloc(length);
  for (let i = 0; i < length; i++) b[i] = (i * mul + add) & 255;
  return b;
}

const rows = [];
for (let length = 0; length <= 200; length++) rows.push([length, 31, 7]);
for (const length of [255, 256, 1000, 1023, 1024, 2047, 3000, 4096, 5003, 65536, 131073]) rows.push([length, 131, 101]);

const lines = rows.map(([length, mul, add]) => {
  const hex = createHash("sha1").update(pattern(length, mul, add)).digest("hex").toUpperCase();
  return `  new Vector(${length}, ${mul}, ${add}, "${hex}"),`;
});

const text = readFileSync(SPEC, "utf8");
const begin = text.indexOf("// BEGIN GENERATED");
const end = text.indexOf("// END GENERATED");
if (begin < 0 || end < begin) {
  console.error("markers not found in", SPEC.pathname);
  process.exit(1);
}
const beginLineEnd = text.indexOf("\n", begin) + 1;
writeFileSync(SPEC, text.slice(0, beginLineEnd) + lines.join("\n") + "\n" + text.slice(end));
console.log(`wrote ${lines.length} vectors into ${SPEC.pathname}`);
