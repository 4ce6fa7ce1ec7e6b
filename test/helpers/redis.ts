// Tests use the same real redis-server launcher as npm start and the benchmarks.
import { afterAll, beforeAll } from "vitest";
import { Redis } from "ioredis";
import { startRedis, type RedisFixture } from "../../host-test/redis-server.js";

export { startRedis, type RedisFixture };

export interface RedisSuite {
  server: RedisFixture;
  /** An ioredis client to it (for assertions on keys, and to drive scripts directly). */
  redis: Redis;
}

/** A redis-server (and a client) for the enclosing suite: started before it, stopped after it. */
export function useRedisSuite(): RedisSuite {
  const suite = {} as RedisSuite;
  beforeAll(async () => {
    suite.server = await startRedis();
    suite.redis = new Redis(suite.server.port, suite.server.host);
  });
  afterAll(async () => {
    suite.redis?.disconnect();
    if (suite.server?.owned) await suite.server.stop();
  });
  return suite;
}
