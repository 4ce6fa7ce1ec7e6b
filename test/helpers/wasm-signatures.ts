// Reads a .wasm's imports and exports WITH their function signatures (WebAssembly.Module.imports
// gives names only), via wabt's text form: `(type (;N;) (func (param ..) (result ..)))` plus
// `(import "m" "n" (func (;i;) (type N)))` and `(export "n" (func i))`.
import wabtInit from "wabt";
import type { FuncSig } from "../../host-test/abi-table.js";

export interface WasmInterface {
  imports: Array<{ module: string; name: string; kind: string; sig?: FuncSig }>;
  exports: Array<{ name: string; kind: string; sig?: FuncSig }>;
}

function parseSig(text: string): FuncSig {
  const params = [...text.matchAll(/\(param ([^)]*)\)/g)].flatMap((m) => m[1].trim().split(/\s+/));
  const results = [...text.matchAll(/\(result ([^)]*)\)/g)].flatMap((m) => m[1].trim().split(/\s+/));
  return { params, results };
}

export async function readWasmInterface(bytes: Uint8Array): Promise<WasmInterface> {
  const wabt = await wabtInit();
  const mod = wabt.readWasm(bytes, { readDebugNames: false });
  const wat = mod.toText({ foldExprs: false, inlineExport: false });
  mod.destroy();
  const types = new Map<number, FuncSig>();
  for (const m of wat.matchAll(/^\s*\(type \(;(\d+);\) \(func([^\n]*)\)\)\s*$/gm)) types.set(Number(m[1]), parseSig(m[2]));
  const funcTypes: FuncSig[] = [];
  const imports: WasmInterface["imports"] = [];
  for (const m of wat.matchAll(/^\s*\(import "([^"]+)" "([^"]+)" \((\w+)(?: \(;\d+;\))?(?: \(type (\d+)\))?/gm)) {
    const entry = { module: m[1], name: m[2], kind: m[3], sig: m[4] !== undefined ? types.get(Number(m[4])) : undefined };
    if (m[3] === "func") funcTypes.push(entry.sig!);
    imports.push(entry);
  }
  for (const m of wat.matchAll(/^\s*\(func \(;(\d+);\) \(type (\d+)\)/gm)) funcTypes[Number(m[1])] = types.get(Number(m[2]))!;
  const exports: WasmInterface["exports"] = [];
  for (const m of wat.matchAll(/^\s*\(export "([^"]+)" \((\w+) (\d+)\)\)/gm)) {
    exports.push({ name: m[1], kind: m[2], sig: m[2] === "func" ? funcTypes[Number(m[3])] : undefined });
  }
  return { imports, exports };
}
