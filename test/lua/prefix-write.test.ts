// prefix_write.lua against a real redis-server: points every level at a host with the key TTL;
// malformed arguments write nothing.
import { describe, expect, it } from "vitest";
import { useRedisSuite } from "../helpers/redis.js";
import { runScript } from "./pool.js";

const suite = useRedisSuite();
const NS = "{llmlb:r:c}";

describe("prefix_write.lua", () => {
  it("sets every level to the host with the TTL and returns how many it wrote", async () => {
    const keys = [`${NS}:p:m:AA`, `${NS}:p:m:BB`];
    await suite.redis.set(keys[0], "10.0.0.9:1");
    expect(await runScript(suite.redis, "prefix_write", keys, ["10.0.0.1:1", 60])).toBe(2);
    expect(await suite.redis.mget(keys)).toEqual(["10.0.0.1:1", "10.0.0.1:1"]);
    const ttl = await suite.redis.ttl(keys[1]);
    expect(ttl).toBeGreaterThan(50);
    expect(ttl).toBeLessThanOrEqual(60);
  });

  it("writes with the longest redisKeyTTL the configuration accepts (a year)", async () => {
    const keys = [`${NS}:p:m:DD`];
    expect(await runScript(suite.redis, "prefix_write", keys, ["10.0.0.1:1", 31536000])).toBe(1);
    expect(await suite.redis.ttl(keys[0])).toBeGreaterThan(31535000);
  });

  it("refuses an empty host or a bad TTL without writing", async () => {
    const keys = [`${NS}:p:m:CC`];
    await expect(runScript(suite.redis, "prefix_write", keys, ["", 60])).rejects.toThrow(/host must not be empty/);
    await expect(runScript(suite.redis, "prefix_write", keys, ["10.0.0.1:1", 0])).rejects.toThrow(/key_ttl_s/);
    expect(await suite.redis.exists(keys[0])).toBe(0);
  });
});
