// Bundles the Redis Lua scripts of lua/: each entry script (every *.lua but lib.lua) becomes
// the part of lib.lua it uses + "\n" + entry, with the lowercase hex SHA-1 Redis returns from
// SCRIPT LOAD, so the plugin can send EVALSHA first and the full text only after a NOSCRIPT reply.
// Only the definitions an entry reaches are kept: Redis runs the whole chunk on every call, so
// each unused `local function` would cost a closure per call (measured: the full lib added
// ~12 us to every EVALSHA; bench/RESULTS.md).
// Used by the build (scripts embedded in the wasm) and by tests.
// Failure: throws when the directory, lib.lua or an entry script is missing, or a script holds
// non-ASCII bytes (the embedded bytes and the SHA-1 must agree in every encoding).
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The entry scripts the plugin relies on; a missing one is a build error, not a runtime one. */
export const LUA_ENTRY_SCRIPTS = ["acquire", "release", "renew", "reconcile", "inspect", "prefix", "charge", "prefix_write", "model", "queue", "score", "sync"];

const DEFAULT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "lua");
const LIB_FILE = "lib.lua";

function readAscii(path) {
  const text = readFileSync(path, "utf8");
  const bad = text.search(/[^\x00-\x7f]/);
  if (bad >= 0) throw new Error(`${path}: non-ASCII character at offset ${bad}`);
  return text;
}

/**
 * Splits lib.lua into its header comment and top-level definitions (`local NAME` or
 * `local function NAME`, with the comment lines above them), in file order.
 * @param {string} lib
 */
function libDefinitions(lib) {
  const lines = lib.split("\n");
  const defs = [];
  let pending = [];
  let header = null;
  for (const line of lines) {
    const m = /^local (?:function )?([A-Za-z_][A-Za-z0-9_]*)/.exec(line);
    if (m) {
      // A one-line constant ends where it starts: comments below it belong to what follows.
      const oneLine = !line.startsWith("local function") && !/[({]\s*(--.*)?$/.test(line);
      defs.push({ name: m[1], lines: [...pending, line], closed: oneLine });
      pending = [];
    } else if (defs.length === 0 && header === null && line.trim() === "") {
      header = pending; // the file's own comment block ends at the first blank line
      pending = [];
    } else if (/^\s*--/.test(line) && (defs.length === 0 || pending.length > 0 || defs.at(-1).closed)) {
      pending.push(line);
    } else if (line.trim() === "" && defs.length > 0) {
      defs.at(-1).closed = true;
      defs.at(-1).lines.push(...pending, line);
      pending = [];
    } else if (defs.length > 0) {
      defs.at(-1).lines.push(...pending, line);
      pending = [];
    } else {
      pending.push(line);
    }
  }
  return { header: header ?? [], defs, trailer: pending };
}

/** Identifiers a piece of Lua code mentions (comments and strings left out). */
function identifiers(code) {
  const stripped = code.replace(/--[^\n]*/g, "").replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, "''");
  return new Set(stripped.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []);
}

/** lib.lua reduced to the definitions `entry` reaches, directly or through other definitions. */
function libFor(parsed, entry) {
  const byName = new Map(parsed.defs.map((d) => [d.name, d]));
  const needed = new Set();
  const visit = (code) => {
    for (const id of identifiers(code)) {
      if (byName.has(id) && !needed.has(id)) {
        needed.add(id);
        visit(byName.get(id).lines.join("\n"));
      }
    }
  };
  visit(entry);
  const kept = parsed.defs.filter((d) => needed.has(d.name)).flatMap((d) => d.lines);
  return [...parsed.header, "", ...kept].join("\n").replace(/\n+$/, "\n");
}

/**
 * @param {string} [dir] directory holding lib.lua and the entry scripts (default: <repo>/lua)
 * @returns {Record<string, { text: string; sha1: string }>} keyed by file name without ".lua"
 */
export function bundleLuaScripts(dir = DEFAULT_DIR) {
  const lib = libDefinitions(readAscii(join(dir, LIB_FILE)));
  const entries = readdirSync(dir).filter((f) => f.endsWith(".lua") && f !== LIB_FILE).sort();
  const bundle = {};
  for (const file of entries) {
    const entry = readAscii(join(dir, file));
    const text = libFor(lib, entry) + "\n" + entry;
    bundle[file.slice(0, -".lua".length)] = { text, sha1: createHash("sha1").update(text).digest("hex") };
  }
  const missing = LUA_ENTRY_SCRIPTS.filter((name) => !(name in bundle));
  if (missing.length > 0) throw new Error(`${dir}: missing Lua entry scripts: ${missing.join(", ")}`);
  return bundle;
}
