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
export const LUA_ENTRY_SCRIPTS = ["acquire", "release", "renew", "reconcile", "inspect", "prefix", "charge", "prefix_write", "model", "queue", "score", "sync", "records"];

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

/** Indices, in file order, of the lib.lua definitions `entry` reaches, directly or through others. */
function neededDefs(parsed, entry) {
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
  return parsed.defs.flatMap((d, i) => (needed.has(d.name) ? [i] : []));
}

/** lib.lua reduced to the definitions `entry` reaches, directly or through other definitions. */
function libFor(parsed, entry) {
  const kept = neededDefs(parsed, entry).flatMap((i) => parsed.defs[i].lines);
  return [...parsed.header, "", ...kept].join("\n").replace(/\n+$/, "\n");
}

const sha1 = (text) => createHash("sha1").update(text).digest("hex");

/** The entry scripts of `dir` (every *.lua but lib.lua), by name, sorted. */
function entryNames(dir) {
  return readdirSync(dir).filter((f) => f.endsWith(".lua") && f !== LIB_FILE).sort().map((f) => f.slice(0, -".lua".length));
}

/**
 * @param {string} [dir] directory holding lib.lua and the entry scripts (default: <repo>/lua)
 * @returns {Record<string, { text: string; sha1: string }>} keyed by file name without ".lua"
 */
export function bundleLuaScripts(dir = DEFAULT_DIR) {
  const lib = libDefinitions(readAscii(join(dir, LIB_FILE)));
  const bundle = {};
  for (const name of entryNames(dir)) {
    const entry = readAscii(join(dir, `${name}.lua`));
    const text = libFor(lib, entry) + "\n" + entry;
    bundle[name] = { text, sha1: sha1(text) };
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
  const { scripts } = embeddedLuaParts(dir);
  return Object.fromEntries(Object.entries(scripts).map(([name, s]) => [name, { text: s.text, sha1: s.sha1 }]));
}

const LIBRARY_PLACEHOLDER = "__LLMLB_LIBRARY__";

/**
 * The function library as the plugin joins it from its pieces (assembly/services/lease/
 * lua_text.ts LibraryText does the same): the name line, KEYS and ARGV as upvalues, every lib.lua
 * definition, then each entry registered as `<name>_<entry>` around its body.
 * @param {string} name @param {string[]} defs @param {string[]} names @param {string[]} bodies
 */
export function libraryJoin(name, defs, names, bodies) {
  return `#!lua name=${name}\nlocal KEYS, ARGV\n` + defs.join("")
    + names.map((n, i) => `redis.register_function('${name}_${n}', function(keys, args)\nKEYS, ARGV = keys, args\n${bodies[i]}end)\n`).join("");
}

/**
 * lua/ in the pieces the plugin embeds, each once (scripts/build.mjs): lib.lua's definitions and
 * each entry script's body, compacted, and per entry the definitions it reaches. The plugin joins
 * them when it needs a text (assembly/services/lease/lua_text.ts): a script's EVAL text is its
 * definitions in file order, then its body; the library is libraryJoin. `scripts[n].text` and
 * `library.text` are those joins, so their SHA-1s are what Redis computes for what the plugin sends.
 * @param {string} [dir]
 */
export function embeddedLuaParts(dir = DEFAULT_DIR) {
  const lib = libDefinitions(readAscii(join(dir, LIB_FILE)));
  const defs = lib.defs.map((d) => compactLua(d.lines.join("\n")));
  const names = entryNames(dir);
  /** @type {Record<string, { defs: number[]; body: string; text: string; sha1: string }>} */
  const scripts = {};
  for (const name of names) {
    const source = readAscii(join(dir, `${name}.lua`));
    const needed = neededDefs(lib, source);
    const body = compactLua(source);
    const text = needed.map((i) => defs[i]).join("") + body;
    scripts[name] = { defs: needed, body, text, sha1: sha1(text) };
  }
  return { defs, names, scripts, library: namedLibrary(defs, names, names.map((n) => scripts[n].body)) };
}

const LIBRARY_PREFIX = "llmlb_";

/**
 * lua/ as one Redis function library (Redis >= 7.0, `FUNCTION LOAD`; the plugin calls it with
 * `FCALL` and falls back to the EVALSHA bundles where functions are unavailable). lib.lua's
 * definitions run once, when the library loads, instead of on every call (creating its closures
 * was ~4 us of every EVALSHA, bench/RESULTS.md section 5). Each entry script becomes the function
 * `<name>_<entry>`, whose body is the script's text run with KEYS and ARGV bound to the call's
 * keys and arguments (upvalues shared with lib.lua's definitions: Redis runs one call at a time).
 * This is the full text (comments kept), for the test drivers; the plugin's is
 * embeddedLuaParts(dir).library, joined the same way from compacted pieces.
 * @param {string} [dir]
 * @returns {{ name: string; text: string; functions: Record<string, string> }}
 */
export function luaLibrary(dir = DEFAULT_DIR) {
  const withNewline = (t) => (t.endsWith("\n") ? t : t + "\n");
  const names = entryNames(dir);
  return namedLibrary([withNewline(readAscii(join(dir, LIB_FILE)))], names, names.map((n) => withNewline(readAscii(join(dir, `${n}.lua`)))));
}

/**
 * libraryJoin under its name: "llmlb_" + 12 hex digits of the SHA-1 of the text, so a changed
 * script is a new library and two plugin versions sharing one Redis never replace each other's.
 */
function namedLibrary(defs, names, bodies) {
  const name = LIBRARY_PREFIX + sha1(libraryJoin(LIBRARY_PLACEHOLDER, defs, names, bodies)).slice(0, 12);
  const functions = Object.fromEntries(names.map((e) => [e, `${name}_${e}`]));
  return { name, text: libraryJoin(name, defs, names, bodies), functions };
}
