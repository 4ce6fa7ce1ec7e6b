// Redis time in virtual runs. The Lua scripts read the server clock (`redis.call('TIME')` in
// lua/lib.lua's now_ms), which in a virtual run would be the wall clock. The driver therefore
// rewrites the plugin's script calls on their way to Redis: `EVALSHA <sha>` / `EVAL <text>` of a
// production script, or `FCALL` of its function in the plugin's library, becomes the EVALSHA /
// EVAL of its VIRTUAL variant with the current virtual Unix ms
// appended to ARGV. The variant is the production bundle with one prologue line that pops that
// last argument (so ARGV is exactly what the plugin sent) and every `redis.call('TIME')` replaced
// by that instant. Production can never take this path: the plugin embeds only the production
// bundles and never sends a clock; the variants exist only here, built at run time from lua/.
// Everything else (plain commands, unknown scripts, and bundles that never read the clock: the
// bundler keeps only the lib definitions a script uses, so e.g. inspect has no now_ms) passes
// unchanged.
// Failure behaviour: throws at construction if a bundle reads the clock in a form other than
// `redis.call('TIME')`, or keeps a TIME call after the rewrite (lua/ changed shape: virtual time
// would silently read the wall clock); throws in translate when the plugin sends a clock-reading
// script or a library function lua/ does not build (a plugin built before lua/ changed).
import { createHash } from "node:crypto";
import { bundleLuaScripts, embeddedLuaParts, luaLibrary } from "../../scripts/lua-bundle.mjs";
import { encodeCommand } from "../../host-test/resp.js";

const TIME_CALL = "redis.call('TIME')";
const PROLOGUE = "local __virtual_now_ms = tonumber(table.remove(ARGV))\n";
const VIRTUAL_TIME = "{ string.format('%d', math.floor(__virtual_now_ms / 1000)), string.format('%d', (__virtual_now_ms % 1000) * 1000) }";

interface Variant { name: string; text: string; sha1: string }

const sha1 = (text: string | Buffer) => createHash("sha1").update(text).digest("hex");

/** Whether a bundled script text names Redis' TIME command anywhere (comments left out). */
export function readsTime(text: string): boolean {
  return /'TIME'|"TIME"/i.test(text.replace(/--[^\n]*/g, ""));
}

/** The virtual variant of one bundled script text that reads the clock. */
export function virtualScriptText(text: string): string {
  if (!text.includes(TIME_CALL)) throw new Error(`virtual-lua: no ${TIME_CALL} to replace`);
  const out = PROLOGUE + text.split(TIME_CALL).join(VIRTUAL_TIME);
  if (out.includes("'TIME'") || out.includes('"TIME"')) throw new Error("virtual-lua: a TIME call is left");
  return out;
}

/** Decodes a RESP array of bulk strings (what the plugin sends); null when it is not one. */
export function decodeCommand(query: Buffer): Buffer[] | null {
  if (query[0] !== 0x2a) return null;
  let pos = query.indexOf("\r\n");
  const count = Number(query.subarray(1, pos).toString());
  if (!Number.isInteger(count) || count < 0) return null;
  pos += 2;
  const args: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    if (query[pos] !== 0x24) return null;
    const end = query.indexOf("\r\n", pos);
    const len = Number(query.subarray(pos + 1, end).toString());
    if (!Number.isInteger(len) || len < 0 || end < 0) return null;
    args.push(query.subarray(end + 2, end + 2 + len));
    pos = end + 2 + len + 2;
  }
  return pos === query.length ? args : null;
}

export class VirtualLua {
  private readonly bySha = new Map<string, Variant>();
  private readonly byFunction = new Map<string, Variant>();
  /** Every function name of the libraries lua/ gives (clock or not). */
  private readonly functions = new Set<string>();
  /** Script calls rewritten (EVALSHA, EVAL, FCALL), for reports and tests. */
  rewritten = 0;

  constructor(dir?: string) {
    // Both forms: the plugin sends the compacted texts it embeds, the test drivers the full ones.
    const parts = embeddedLuaParts(dir);
    const embedded = parts.scripts;
    const bundles = [...Object.entries(embedded), ...Object.entries(bundleLuaScripts(dir))];
    for (const [name, b] of bundles) {
      if (!readsTime(b.text)) continue; // no clock to follow: the production script runs as is
      const text = virtualScriptText(b.text);
      this.bySha.set(b.sha1, { name, text, sha1: sha1(text) });
    }
    for (const library of [parts.library, luaLibrary(dir)]) {
      for (const [name, fn] of Object.entries(library.functions)) {
        this.functions.add(fn);
        const variant = this.bySha.get(embedded[name].sha1);
        if (variant) this.byFunction.set(fn, variant);
      }
    }
  }

  /** The query Redis should run at Unix ms `nowMs`: a script call rewritten, anything else as is. */
  translate(query: Buffer, nowMs: number): Buffer {
    const head = query.subarray(0, 24).toString("latin1").toUpperCase();
    if (!head.includes("EVAL") && !head.includes("FCALL")) return query;
    const args = decodeCommand(query);
    if (!args || args.length < 3) return query;
    const verb = args[0].toString().toUpperCase();
    let variant: Variant | undefined;
    if (verb === "EVALSHA") variant = this.bySha.get(args[1].toString().toLowerCase());
    else if (verb === "EVAL") variant = this.bySha.get(sha1(args[1]));
    else if (verb === "FCALL") variant = this.byFunction.get(args[1].toString());
    if (!variant) {
      // A script reading the clock that lua/ does not give: the plugin was built from other Lua
      // (lua/ changed after the build). It would run on the wall clock and the run's numbers would
      // mean nothing, so the run stops.
      if ((verb === "EVAL" && readsTime(args[1].toString())) || (verb === "FCALL" && /^llmlb_/.test(args[1].toString()) && !this.functions.has(args[1].toString()))) {
        throw new Error(`virtual-lua: the plugin's ${verb} ${verb === "FCALL" ? args[1].toString() : "script"} is not one lua/ builds: build/ is older than lua/ (npm run build)`);
      }
      return query;
    }
    this.rewritten++;
    // An FCALL becomes the variant's EVALSHA; its NOSCRIPT reply makes the plugin send EVAL.
    const body = verb === "EVAL" ? variant.text : variant.sha1;
    return encodeCommand([verb === "EVAL" ? "EVAL" : "EVALSHA", body, ...args.slice(2), String(Math.floor(nowMs))]);
  }
}
