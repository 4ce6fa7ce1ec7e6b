// The texts of lua/ as the plugin sends them, joined from the pieces the build embeds once each
// (scripts/build.mjs; scripts/lua-bundle.mjs embeddedLuaParts joins them the same way, and its
// SHA-1s are the ones EVALSHA sends): a script's EVAL text is the lib.lua definitions it reaches,
// in file order, then its body; the function library is every definition, then each entry
// registered around its body (lua-bundle.mjs libraryJoin). Joined only when sent: on a NOSCRIPT
// reply, for a FUNCTION LOAD.
import { LuaText } from "../../redis/functions";
import * as gen from "../../generated/lua";

function bodyOf(name: string): string {
  const i = gen.LUA_ENTRIES.indexOf(name);
  return i >= 0 ? gen.LUA_BODIES[i] : "";
}

export class ScriptText extends LuaText {
  constructor(public name: string, public defs: i32[]) { super(); }

  build(): string {
    const parts = new Array<string>(0);
    for (let i = 0; i < this.defs.length; i++) parts.push(gen.LUA_DEFS[this.defs[i]]);
    parts.push(bodyOf(this.name));
    return parts.join("");
  }
}

export class LibraryText extends LuaText {
  build(): string {
    const name = gen.LIBRARY_NAME;
    const parts = new Array<string>(0);
    parts.push("#!lua name=" + name + "\nlocal KEYS, ARGV\n");
    for (let i = 0; i < gen.LUA_DEFS.length; i++) parts.push(gen.LUA_DEFS[i]);
    for (let i = 0; i < gen.LUA_ENTRIES.length; i++) {
      parts.push("redis.register_function('" + name + "_" + gen.LUA_ENTRIES[i] + "', function(keys, args)\nKEYS, ARGV = keys, args\n");
      parts.push(gen.LUA_BODIES[i]);
      parts.push("end)\n");
    }
    return parts.join("");
  }
}
