// Test-only wasm entry (not a spec, not part of the plugin build): exposes the prefix key
// pipeline to test/prefix/higress-keys.test.ts, which compiles this file with asc (stub runtime,
// so nothing is ever freed) and compares the keys with an independent TypeScript computation.
// Protocol: inputBuffer(len) returns where to write the body bytes; levelKeys(...) returns a
// string (UTF-16, length in bytes at ptr - 4): the level keys joined by "\n", or "!" + reason.
import { parseJson } from "../json/parse";
import { KeyOptions, prefixLevelKeys } from "../prefix/keys";

let input: Uint8Array = new Uint8Array(0);

export function inputBuffer(len: i32): usize {
  input = new Uint8Array(len);
  return input.dataStart;
}

export function levelKeys(compat: bool, orderSensitive: bool, chunkBytes: i32, maxBlocks: i32, maxHashBytes: i32): string {
  const r = parseJson(input);
  const body = r.value;
  if (!r.ok || body === null) return "!json: " + r.error;
  const o = new KeyOptions();
  o.compat = compat;
  o.orderSensitive = orderSensitive;
  o.chunkBytes = chunkBytes;
  o.maxBlocks = maxBlocks;
  o.maxHashBytes = maxHashBytes;
  return prefixLevelKeys(body, o, "NS").keys.join("\n");
}
