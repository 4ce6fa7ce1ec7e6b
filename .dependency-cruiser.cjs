// Import rules checked by `npm test` (test/arch/import-rules.test.ts) with dependency-cruiser:
// no import circle in assembly/ or host-test/, and the plugin's layers import only downward
// (assembly/README.md). TypeScript's own parser reads the files (tsPreCompilationDeps), so
// AssemblyScript syntax (decorators on functions, <T>casts) is parsed, and imports used only as
// types still count; `import type` circles (erased at compile time) are allowed in host-test/.
/** Each layer and what lies above it (what it must not import). */
const LAYERS = [
  ["(util|host|json|redis|generated)/", "(config|prefix|metrics|services|policy|filter)/|index\\.ts$"],
  ["config/", "(prefix|metrics|services|policy|filter)/|index\\.ts$"],
  ["(prefix|metrics)/", "(services|policy|filter)/|index\\.ts$"],
  ["services/", "(policy|filter)/|index\\.ts$"],
  ["policy/", "filter/|index\\.ts$"],
  ["filter/", "index\\.ts$"],
];

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import circle: break it with a narrower interface (assembly/README.md).",
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
    ...LAYERS.map(([layer, above]) => ({
      name: "no-upward-import",
      severity: "error",
      comment: `${layer} must not import a higher layer (assembly/README.md: dependency order)`,
      from: { path: `^assembly/${layer}` },
      to: { path: `^assembly/(${above})` },
    })),
  ],
  options: {
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" },
  },
};
