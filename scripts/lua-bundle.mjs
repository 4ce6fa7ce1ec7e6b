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

/**
 * Drops whole-line comments, blank lines and indentation: scripts are embedded as UTF-16 string
 * literals and sent on every EVAL fallback, so their comments would cost twice. Long strings and
 * block comments are not used in lua/ (checked here), so a line-based pass is safe.
 * @param {string} text
 */
export function compactLua(text) {
  if (text.includes("[[") || text.includes("--[")) throw new Error("lua/: long strings/comments are not supported by compactLua");
  return text.split("\n").map((l) => l.trim()).filter((l) => l.length > 0 && !l.startsWith("--")).join("\n") + "\n";
}

/**
 * The scripts exactly as the plugin embeds and sends them (scripts/build.mjs): each bundle
 * compacted, with the SHA-1 of the compacted text. Anything that must recognise the plugin's
 * script calls (bench/virtual/virtual-lua.ts) uses these, not bundleLuaScripts' texts.
 * @param {string} [dir]
 */
export function embeddedLuaScripts(dir = DEFAULT_DIR) {
  const bundles = bundleLuaScripts(dir);
  for (const b of Object.values(bundles)) {
    b.text = compactLua(b.text);
    b.sha1 = createHash("sha1").update(b.text).digest("hex");
  }
  return bundles;
}

const LIBRARY_PREFIX = "llmlb_";

/**
 * lua/ as one Redis function library (Redis >= 7.0, `FUNCTION LOAD`; the plugin calls it with
 * `FCALL` and falls back to the EVALSHA bundles where functions are unavailable). lib.lua's
 * definitions run once, when the library loads, instead of on every call (creating its closures
 * was ~4 us of every EVALSHA, bench/RESULTS.md section 5). Each entry script becomes the function
 * `<name>_<entry>`, whose body is the script's text run with KEYS and ARGV bound to the call's
 * keys and arguments (upvalues shared with lib.lua's definitions: Redis runs one call at a time).
 * The name is "llmlb_" + 12 hex digits of the SHA-1 of the library's text, so a changed script
 * is a new library and two plugin versions sharing one Redis never replace each other's.
 * @param {string} [dir]
 * @param {(text: string) => string} [shape] applied to the text before it is named (compactLua)
 * @returns {{ name: string; text: string; functions: Record<string, string> }}
 */
export function luaLibrary(dir = DEFAULT_DIR, shape = (t) => t) {
  const placeholder = "__LLMLB_LIBRARY__";
  const entries = readdirSync(dir).filter((f) => f.endsWith(".lua") && f !== LIB_FILE).sort().map((f) => f.slice(0, -".lua".length));
  const parts = ["local KEYS, ARGV", readAscii(join(dir, LIB_FILE))];
  for (const entry of entries) {
    parts.push(`redis.register_function('${placeholder}_${entry}', function(keys, args)\nKEYS, ARGV = keys, args\n`
      + `${readAscii(join(dir, `${entry}.lua`))}\nend)`);
  }
  const body = shape(parts.join("\n"));
  const name = LIBRARY_PREFIX + createHash("sha1").update(body).digest("hex").slice(0, 12);
  const functions = Object.fromEntries(entries.map((e) => [e, `${name}_${e}`]));
  return { name, text: `#!lua name=${name}\n` + body.split(placeholder).join(name), functions };
}
