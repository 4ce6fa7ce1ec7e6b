// The bundle the plugin embeds: names, SHA-1 identical to Redis' SCRIPT LOAD, EVAL fallback.
import { beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";
import { bundleLuaScripts, LUA_ENTRY_SCRIPTS } from "../../scripts/lua-bundle.mjs";
import { Pool, SCRIPTS, hostList } from "./pool.js";

const suite = useRedisSuite();
let server: RedisFixture;
let redis: Redis;
beforeAll(() => { ({ server, redis } = suite); });

describe("bundleLuaScripts", () => {
  it("bundles every entry script as lib.lua + newline + entry", () => {
    expect(Object.keys(SCRIPTS).sort()).toEqual([...LUA_ENTRY_SCRIPTS].sort());
    const libText = SCRIPTS.acquire.text.slice(0, SCRIPTS.acquire.text.indexOf("\n-- acquire.lua"));
    for (const name of LUA_ENTRY_SCRIPTS) {
      expect(SCRIPTS[name].text.startsWith(libText + "\n-- " + name + ".lua")).toBe(true);
      expect(SCRIPTS[name].sha1).toBe(createHash("sha1").update(SCRIPTS[name].text).digest("hex"));
    }
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
