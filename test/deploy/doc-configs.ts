// The plugin configurations the documentation shows: README's YAML blocks that are a plugin
// configuration (a top-level lb_policy), every WasmPlugin `config` in envoy/ (defaultConfig and
// matchRules[].config) and the local gateway's `plugin.configuration` in envoy/local/.
// Shared by the envoy/ YAML test and the schema agreement test.
import fs from "node:fs";
import path from "node:path";
import { parse, parseAllDocuments } from "yaml";

export type Obj = Record<string, any>;
export interface DocConfig { where: string; config: Obj; routes: string[] }

export function yamlFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? yamlFiles(p) : /\.ya?ml$/.test(e.name) ? [p] : [];
  });
}

/** Every YAML document under dir (envoy/local excluded: those are local gateway files). */
export function yamlDocs(dir: string): Array<{ file: string; doc: Obj }> {
  return yamlFiles(dir).filter((f) => !f.startsWith(path.join(dir, "local"))).flatMap((file) =>
    parseAllDocuments(fs.readFileSync(file, "utf8")).map((d, i) => {
      if (d.errors.length > 0) throw new Error(`${file} document ${i}: ${d.errors[0].message}`);
      return { file, doc: d.toJS() as Obj };
    }));
}

export function wasmPluginConfigs(dir = "envoy"): DocConfig[] {
  return yamlDocs(dir).filter((d) => d.doc?.kind === "WasmPlugin").flatMap(({ file, doc }) => [
    ...(doc.spec.defaultConfig ? [{ where: `${file} defaultConfig`, config: doc.spec.defaultConfig as Obj, routes: [] as string[] }] : []),
    ...(doc.spec.matchRules ?? []).map((r: Obj, i: number) => ({ where: `${file} matchRules[${i}]`, config: r.config as Obj, routes: (r.ingress ?? []) as string[] })),
  ]);
}

export function localGatewayConfigs(dir = "envoy/local"): DocConfig[] {
  return yamlFiles(dir).map((file) => ({ where: file, config: (parse(fs.readFileSync(file, "utf8")) as Obj).plugin.configuration as Obj, routes: [] }));
}

export function readmeConfigs(file = "README.md"): DocConfig[] {
  return [...fs.readFileSync(file, "utf8").matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((m, i) => ({ where: `${file} yaml block ${i}`, config: parse(m[1]) as Obj, routes: [] }))
    .filter((c) => c.config !== null && typeof c.config === "object" && "lb_policy" in c.config);
}
