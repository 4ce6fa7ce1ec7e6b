// The Lua scripts of lua/, embedded at build time (scripts/build.mjs writes ../generated/lua.ts
// from lua/ with each bundle's SHA-1, so EVALSHA needs no SCRIPT LOAD round trip, and the
// function library).
import { LuaScript } from "../../redis/client";
import { LuaLibrary } from "../../redis/functions";
import * as gen from "../../generated/lua";

/** All of lua/ as one Redis function library (FCALL where Redis has functions, redis/functions.ts). */
export const LUA_LIBRARY = new LuaLibrary(gen.LIBRARY_NAME, gen.LIBRARY_SOURCE);

export const ACQUIRE_SCRIPT = new LuaScript("acquire", gen.ACQUIRE_SOURCE, gen.ACQUIRE_SHA, LUA_LIBRARY);
export const RELEASE_SCRIPT = new LuaScript("release", gen.RELEASE_SOURCE, gen.RELEASE_SHA, LUA_LIBRARY);
export const RENEW_SCRIPT = new LuaScript("renew", gen.RENEW_SOURCE, gen.RENEW_SHA, LUA_LIBRARY);
export const RECONCILE_SCRIPT = new LuaScript("reconcile", gen.RECONCILE_SOURCE, gen.RECONCILE_SHA, LUA_LIBRARY);
export const PREFIX_SCRIPT = new LuaScript("prefix", gen.PREFIX_SOURCE, gen.PREFIX_SHA, LUA_LIBRARY);
export const CHARGE_SCRIPT = new LuaScript("charge", gen.CHARGE_SOURCE, gen.CHARGE_SHA, LUA_LIBRARY);
export const INSPECT_SCRIPT = new LuaScript("inspect", gen.INSPECT_SOURCE, gen.INSPECT_SHA, LUA_LIBRARY);
export const PREFIX_WRITE_SCRIPT = new LuaScript("prefix_write", gen.PREFIX_WRITE_SOURCE, gen.PREFIX_WRITE_SHA, LUA_LIBRARY);
export const SCORE_SCRIPT = new LuaScript("score", gen.SCORE_SOURCE, gen.SCORE_SHA, LUA_LIBRARY);
export const SYNC_SCRIPT = new LuaScript("sync", gen.SYNC_SOURCE, gen.SYNC_SHA, LUA_LIBRARY);
