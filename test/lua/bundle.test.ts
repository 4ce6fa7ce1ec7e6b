// The bundle the plugin embeds: names, SHA-1 identical to Redis' SCRIPT LOAD, EVAL fallback.
import { beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { bundleLuaScripts, LUA_ENTRY_SCRIPTS } from "../../scripts/lua-bundle.mjs";
import { Pool, SCRIPTS, hostList } from "./pool.js";

const LUA_DIR = join(process.cwd(), "lua");

const suite = useRedisSuite();
let server: RedisFixture;
let redis: Redis;
beforeAll(() => { ({ server, redis } = suite); });

describe("bundleLuaScripts", () => {
  it("bundles every entry script as the lib.lua definitions it uses + newline + entry", () => {
    expect(Object.keys(SCRIPTS).sort()).toEqual([...LUA_ENTRY_SCRIPTS].sort());
    const lib = readFileSync(join(LUA_DIR, "lib.lua"), "utf8");
    for (const name of LUA_ENTRY_SCRIPTS) {
      const entry = readFileSync(join(LUA_DIR, `${name}.lua`), "utf8");
      const text = SCRIPTS[name].text;
      expect(text.endsWith("\n" + entry)).toBe(true);
      expect(SCRIPTS[name].sha1).toBe(createHash("sha1").update(text).digest("hex"));
      // Every kept line comes from lib.lua, in lib.lua's order.
      const kept = text.slice(0, text.length - entry.length - 1).split("\n").filter((l) => l.trim() !== "");
      let at = 0;
      for (const line of kept) { at = lib.indexOf(line, at); expect(at, line).toBeGreaterThanOrEqual(0); }
    }
    // Only what an entry reaches is kept: inspect.lua uses fail() and the host cap, not the pick.
    expect(SCRIPTS.inspect.text).toContain("local function fail(");
    expect(SCRIPTS.inspect.text).not.toContain("pick_least_loaded");
    expect(SCRIPTS.acquire.text).toContain("local function pick_least_loaded(");
    expect(SCRIPTS.acquire.text).not.toContain("local function collect_dead(");
  });

  it("gives the SHA-1 that SCRIPT LOAD returns, for every script", async () => {
    for (const name of LUA_ENTRY_SCRIPTS) {
      expect(await redis.script("LOAD", SCRIPTS[name].text)).toBe(SCRIPTS[name].sha1);
    }
  });

  it("lets EVAL load a script the server lost, after which EVALSHA works", async () => {
    await redis.script("FLUSH");
    const pool = new Pool(redis);
    await expect(redis.evalsha(SCRIPTS.inspect.sha1, 1, pool.loadKey)).rejects.toThrow(/NOSCRIPT/);
    // Pool.acquire goes through the EVALSHA -> NOSCRIPT -> EVAL path.
    expect((await pool.acquire({ leaseId: "x", hosts: hostList(2) })).status).toBe("OK");
    // EVAL cached the acquire script under the bundle's SHA-1, and only that one.
    expect(await redis.script("EXISTS", SCRIPTS.acquire.sha1, SCRIPTS.inspect.sha1)).toEqual([1, 0]);
  });

  it("rejects a directory missing an entry script, and non-ASCII text", () => {
    const dir = mkdtempSync(join(tmpdir(), "lua-bundle-"));
    try {
      writeFileSync(join(dir, "lib.lua"), "-- lib\n");
      writeFileSync(join(dir, "acquire.lua"), "return 1\n");
      expect(() => bundleLuaScripts(dir)).toThrow(/missing Lua entry scripts: release, renew, reconcile, inspect/);
      writeFileSync(join(dir, "lib.lua"), "-- caf\u00e9\n");
      expect(() => bundleLuaScripts(dir)).toThrow(/non-ASCII/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
