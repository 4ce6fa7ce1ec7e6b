// The Lua scripts of lua/, embedded at build time (scripts/build.mjs writes ../generated/lua.ts
// from lua/ with each bundle's SHA-1, so EVALSHA needs no SCRIPT LOAD round trip).
import { LuaScript } from "../../redis/client";
import * as gen from "../../generated/lua";

export const ACQUIRE_SCRIPT = new LuaScript("acquire", gen.ACQUIRE_SOURCE, gen.ACQUIRE_SHA);
export const RELEASE_SCRIPT = new LuaScript("release", gen.RELEASE_SOURCE, gen.RELEASE_SHA);
export const RENEW_SCRIPT = new LuaScript("renew", gen.RENEW_SOURCE, gen.RENEW_SHA);
export const RECONCILE_SCRIPT = new LuaScript("reconcile", gen.RECONCILE_SOURCE, gen.RECONCILE_SHA);
export const PREFIX_SCRIPT = new LuaScript("prefix", gen.PREFIX_SOURCE, gen.PREFIX_SHA);
export const CHARGE_SCRIPT = new LuaScript("charge", gen.CHARGE_SOURCE, gen.CHARGE_SHA);
export const INSPECT_SCRIPT = new LuaScript("inspect", gen.INSPECT_SOURCE, gen.INSPECT_SHA);
export const PREFIX_WRITE_SCRIPT = new LuaScript("prefix_write", gen.PREFIX_WRITE_SOURCE, gen.PREFIX_WRITE_SHA);
export const SCORE_SCRIPT = new LuaScript("score", gen.SCORE_SOURCE, gen.SCORE_SHA);
export const SYNC_SCRIPT = new LuaScript("sync", gen.SYNC_SOURCE, gen.SYNC_SHA);
