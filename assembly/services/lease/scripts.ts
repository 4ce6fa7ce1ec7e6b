// The Lua scripts of lua/, embedded at build time (scripts/build.mjs writes ../generated/lua.ts
// from lua/: the pieces, each script's SHA-1, so EVALSHA needs no SCRIPT LOAD round trip, and the
// function library's name; lua_text.ts joins the texts when they are sent).
import { LuaScript } from "../../redis/client";
import { LuaLibrary } from "../../redis/functions";
import { LibraryText, ScriptText } from "./lua_text";
import * as gen from "../../generated/lua";

/** All of lua/ as one Redis function library (FCALL where Redis has functions, redis/functions.ts). */
export const LUA_LIBRARY = new LuaLibrary(gen.LIBRARY_NAME, new LibraryText());

export const ACQUIRE_SCRIPT = new LuaScript("acquire", new ScriptText("acquire", gen.ACQUIRE_DEFS), gen.ACQUIRE_SHA, LUA_LIBRARY);
export const RELEASE_SCRIPT = new LuaScript("release", new ScriptText("release", gen.RELEASE_DEFS), gen.RELEASE_SHA, LUA_LIBRARY);
export const RENEW_SCRIPT = new LuaScript("renew", new ScriptText("renew", gen.RENEW_DEFS), gen.RENEW_SHA, LUA_LIBRARY);
export const RECONCILE_SCRIPT = new LuaScript("reconcile", new ScriptText("reconcile", gen.RECONCILE_DEFS), gen.RECONCILE_SHA, LUA_LIBRARY);
export const PREFIX_SCRIPT = new LuaScript("prefix", new ScriptText("prefix", gen.PREFIX_DEFS), gen.PREFIX_SHA, LUA_LIBRARY);
export const CHARGE_SCRIPT = new LuaScript("charge", new ScriptText("charge", gen.CHARGE_DEFS), gen.CHARGE_SHA, LUA_LIBRARY);
export const INSPECT_SCRIPT = new LuaScript("inspect", new ScriptText("inspect", gen.INSPECT_DEFS), gen.INSPECT_SHA, LUA_LIBRARY);
export const PREFIX_WRITE_SCRIPT = new LuaScript("prefix_write", new ScriptText("prefix_write", gen.PREFIX_WRITE_DEFS), gen.PREFIX_WRITE_SHA, LUA_LIBRARY);
export const SCORE_SCRIPT = new LuaScript("score", new ScriptText("score", gen.SCORE_DEFS), gen.SCORE_SHA, LUA_LIBRARY);
export const SYNC_SCRIPT = new LuaScript("sync", new ScriptText("sync", gen.SYNC_DEFS), gen.SYNC_SHA, LUA_LIBRARY);
