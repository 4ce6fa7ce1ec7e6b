// A real redis-server a test file owns, to stop, freeze and start again (Redis outages), and the
// wait until a host's Redis breaker closed again after one.
import { afterAll, beforeAll, expect } from "vitest";
import type { TestHost } from "../../host-test/facade/index.js";
import { startRedis, type RedisFixture } from "./redis.js";

export interface StoppableRedis {
  readonly server: RedisFixture;
  readonly paused: boolean;
  stop(): Promise<void>;
  start(): Promise<void>;
  freeze(): void;
  thaw(): void;
  /** For afterEach: a test that failed during its outage leaves Redis running again. */
  restore(): Promise<void>;
}

/** Starts the file's own server before its tests and stops it after them. */
export function useStoppableRedis(): StoppableRedis {
  let server: RedisFixture | null = null;
  let stopped = false;
  let paused = false;
  beforeAll(async () => { server = await startRedis(); });
  afterAll(async () => { if (server?.owned && !stopped) await server.stop(); });
  const r: StoppableRedis = {
    get server() { return server!; },
    get paused() { return paused; },
    async stop() { await server!.stop(); stopped = true; },
    async start() { await server!.start(); stopped = false; },
    freeze() { server!.pause(); paused = true; },
    thaw() { server!.resume(); paused = false; },
    async restore() {
      if (paused) r.thaw();
      if (stopped) await r.start();
    },
  };
  return r;
}

/** Moves the clock in ticks until the breaker's probe got an answer (picks go through Redis again)
 *  and a few ticks more (the tracker's read of the counts answered). */
export async function untilBackOnRedis(t: TestHost): Promise<void> {
  for (let i = 0; i < 40 && t.metric("llmlb_redis_breakers_open") !== 0; i++) {
    t.advance(100);
    await t.redisIdle();
  }
  expect(t.metric("llmlb_redis_breakers_open")).toBe(0);
  for (let i = 0; i < 5; i++) { t.advance(100); await t.redisIdle(); }
}
