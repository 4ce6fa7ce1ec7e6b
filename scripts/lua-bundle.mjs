// Bundles the Redis Lua scripts of lua/: each entry script (every *.lua but lib.lua) becomes
// lib.lua + "\n" + entry, with the lowercase hex SHA-1 Redis returns from SCRIPT LOAD, so the
// plugin can send EVALSHA first and the full text only after a NOSCRIPT reply.
// Used by the build (scripts embedded in the wasm) and by tests.
// Failure: throws when the directory, lib.lua or an entry script is missing, or a script holds
// non-ASCII bytes (the embedded bytes and the SHA-1 must agree in every encoding).
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The entry scripts the plugin relies on; a missing one is a build error, not a runtime one. */
export const LUA_ENTRY_SCRIPTS = ["acquire", "release", "renew", "reconcile", "inspect", "prefix", "charge", "prefix_write", "score"];

const DEFAULT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "lua");
const LIB_FILE = "lib.lua";

function readAscii(path) {
  const text = readFileSync(path, "utf8");
  const bad = text.search(/[^\x00-\x7f]/);
  if (bad >= 0) throw new Error(`${path}: non-ASCII character at offset ${bad}`);
  return text;
}

/**
 * @param {string} [dir] directory holding lib.lua and the entry scripts (default: <repo>/lua)
 * @returns {Record<string, { text: string; sha1: string }>} keyed by file name without ".lua"
 */
export function bundleLuaScripts(dir = DEFAULT_DIR) {
  const lib = readAscii(join(dir, LIB_FILE));
  const entries = readdirSync(dir).filter((f) => f.endsWith(".lua") && f !== LIB_FILE).sort();
  const bundle = {};
  for (const file of entries) {
    const text = lib + "\n" + readAscii(join(dir, file));
    bundle[file.slice(0, -".lua".length)] = { text, sha1: createHash("sha1").update(text).digest("hex") };
  }
  const missing = LUA_ENTRY_SCRIPTS.filter((name) => !(name in bundle));
  if (missing.length > 0) throw new Error(`${dir}: missing Lua entry scripts: ${missing.join(", ")}`);
  return bundle;
}
