// The parser's own lists of keys and its defaults (assembly/config/*.ts, read as text) against
// envoy/ai-load-balancer.schema.json and README's configuration tables, so that a key or default
// changed in one place and not the others fails here. schema-agreement.test.ts compares what the
// schema and the plugin accept; this file compares the names and the defaults, which acceptance
// alone cannot see (a key the parser knows and the schema lacks is never probed; a changed default
// is accepted either way).
import fs from "node:fs";
import { describe, expect, it } from "vitest";

type Obj = Record<string, unknown>;

const DIR = "assembly/config";
const sources = fs.readdirSync(DIR).filter((f) => f.endsWith(".ts")).map((f) => fs.readFileSync(`${DIR}/${f}`, "utf8"));
const all = sources.join("\n");
const schema = JSON.parse(fs.readFileSync("envoy/ai-load-balancer.schema.json", "utf8"));
const defs = schema.definitions as Record<string, { properties: Record<string, Obj> }>;

/** Every `const <NAME>_KEYS: string[] = <expression>;` of the config sources, evaluated (literals
 *  and `.concat` of other lists, as they are written). */
function keyLists(): Record<string, string[]> {
  const exprs = new Map<string, string>();
  for (const m of all.matchAll(/const (\w+_KEYS): string\[\] = ([\s\S]*?);\n/g)) exprs.set(m[1], m[2]);
  const done: Record<string, string[]> = {};
  const evaluate = (name: string): string[] => {
    if (done[name]) return done[name];
    const expr = exprs.get(name);
    if (expr === undefined) throw new Error(`no list ${name} in ${DIR}`);
    const deps = [...new Set([...expr.matchAll(/\b([A-Z][A-Z0-9_]+)\b/g)].map((d) => d[1]))].filter((d) => exprs.has(d));
    done[name] = new Function(...deps, `return ${expr};`)(...deps.map(evaluate)) as string[];
    return done[name];
  };
  for (const name of exprs.keys()) evaluate(name);
  return done;
}

/** A default as the code writes it: a literal, a named constant, or a class field's initializer. */
function resolve(text: string): unknown {
  const t = text.trim();
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (t === "true" || t === "false") return t === "true";
  const str = /^"([^"]*)"$/.exec(t);
  if (str) return str[1];
  const constant = new RegExp(`const ${t}(?::\\s*\\w+)? = ([^;\\n]+);`).exec(all);
  if (constant) return resolve(constant[1]);
  const member = /^\w+\.(\w+)$/.exec(t);
  if (member) {
    const field = new RegExp(`\\n\\s+${member[1]}: \\w+ = ([^;]+);`).exec(all);
    if (field) return resolve(field[1]);
  }
  return undefined;
}

/** Key -> every default the parser's reader calls give it (a key read by two policies twice). */
function codeDefaults(): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  const add = (key: string, v: unknown) => out.set(key, [...(out.get(key) ?? []), v]);
  for (const m of all.matchAll(/\b\w+\.(?:int|num|bool|choice|str|headerName|headerNameOrDefault|secret)\("(\w+)",\s*([^,)]+)/g)) add(m[1], resolve(m[2]));
  for (const m of all.matchAll(/intZeroDefault\(r, "(\w+)", ([^,]+)/g)) add(m[1], resolve(m[2]));
  for (const m of all.matchAll(/\b\w+\.secret\("(\w+)"\)/g)) add(m[1], ""); // secret(name): "" by default
  return out;
}

/** Keys whose default the code computes instead of writing it in the reader call. */
const COMPUTED: Record<string, string> = {
  blockBoundary: "user with compat, else message",
  mode: "read as \"\"; missing or \"\" is LeastBusy",
  global_inflight_key_prefix: "read as \"\"; missing or \"\" is Higress's higress:adaptive_score_inflight",
};

const lists = keyLists();
const propsOf = (d: string) => Object.keys(defs[d].properties).sort();
const sorted = (a: string[]) => [...new Set(a)].sort();

describe("the parser's keys are the schema's keys", () => {
  it("top level and _rules_ entries", () => {
    expect(sorted(lists.TOP_KEYS)).toEqual(Object.keys(schema.properties).sort());
    expect(sorted(lists.RULE_KEYS)).toEqual(Object.keys(defs.rule.properties).sort());
  });

  it("lb_config of an endpoint policy: ours, endpoint_hash's and the other Higress policies' (accepted, ignored)", () => {
    const ours = [...lists.COMMON_KEYS, ...lists.PREFIX_KEYS, ...lists.METRICS_KEYS, ...lists.SLO_KEYS, ...lists.QUEUE_KEYS, ...lists.ENDPOINT_HASH_KEYS];
    expect(sorted([...ours, ...lists.HIGRESS_FOREIGN_KEYS])).toEqual(propsOf("endpointConfig"));
    // A key the parser reads has a type in the schema; a key it only accepts has none.
    const untyped = propsOf("endpointConfig").filter((k) => !defs.endpointConfig.properties[k].type);
    expect(untyped).toEqual(sorted(lists.HIGRESS_FOREIGN_KEYS.filter((k) => !ours.includes(k))));
  });

  it("lb_config of cluster_metrics and cluster_hash: theirs, ours, every other Higress key (accepted, ignored)", () => {
    const metrics = [...lists.HIGRESS_CLUSTER_METRICS_KEYS, ...lists.CLUSTER_METRICS_OWN_KEYS, ...lists.CLUSTER_DEBUG_KEYS];
    expect(sorted([...metrics, ...lists.HIGRESS_ALL_KEYS])).toEqual(propsOf("clusterMetricsConfig"));
    const hash = [...lists.HIGRESS_CLUSTER_HASH_KEYS, ...lists.CLUSTER_DEBUG_KEYS];
    expect(sorted([...hash, ...lists.HIGRESS_ALL_KEYS])).toEqual(propsOf("clusterHashConfig"));
  });
});

describe("defaults agree", () => {
  const code = codeDefaults();

  it("every schema default is the parser's default", () => {
    const wrong: string[] = [];
    let compared = 0;
    for (const d of ["endpointConfig", "clusterMetricsConfig", "clusterHashConfig"]) {
      for (const [key, spec] of Object.entries(defs[d].properties)) {
        if (!("default" in spec) || key in COMPUTED) continue;
        const found = code.get(key);
        if (!found) { wrong.push(`${d}.${key}: schema default ${JSON.stringify(spec.default)}, no reader call in ${DIR}`); continue; }
        compared++;
        for (const v of found) if (v !== spec.default) wrong.push(`${d}.${key}: schema ${JSON.stringify(spec.default)}, code ${JSON.stringify(v)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(compared).toBeGreaterThan(100);
  });

  it("every default README's key tables write as one value is the schema's", () => {
    const readme = fs.readFileSync("README.md", "utf8");
    const section = readme.slice(readme.indexOf("## Configuration"), readme.indexOf("\n## ", readme.indexOf("## Configuration") + 5));
    const schemaDefault = (key: string): unknown[] => ["endpointConfig", "clusterMetricsConfig", "clusterHashConfig"]
      .flatMap((d) => (defs[d].properties[key] && "default" in defs[d].properties[key] ? [defs[d].properties[key].default] : []));
    const wrong: string[] = [];
    let compared = 0;
    let inKeyTable = false;
    for (const line of section.split("\n")) {
      if (!line.startsWith("|")) { inKeyTable = false; continue; }
      if (/^\| key \|/.test(line)) { inKeyTable = true; continue; }
      const cells = line.split(" | ");
      if (!inKeyTable || cells.length < 3) continue;
      const keys = [...cells[0].matchAll(/`(\w+)`/g)].map((m) => m[1]);
      const values = keys.length > 1 ? cells[1].split(" / ") : [cells[1]];
      if (values.length !== keys.length) continue;
      keys.forEach((key, i) => {
        const literal = /^`([^`]*)`/.exec(values[i].trim());
        if (!literal || key in COMPUTED) return;
        const text = literal[1] === '""' ? "" : literal[1];
        for (const v of schemaDefault(key)) {
          compared++;
          if (String(v) !== text) wrong.push(`README ${key}: ${text}, schema ${JSON.stringify(v)}`);
        }
      });
    }
    expect(wrong).toEqual([]);
    expect(compared).toBeGreaterThan(80);
  });
});
