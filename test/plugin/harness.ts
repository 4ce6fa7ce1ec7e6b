// Shared set-up for plugin tests through the host facade: the built release module, a cluster of
// hosts, and Higress-shaped configurations.
import { afterEach, beforeAll } from "vitest";
import type { Redis } from "ioredis";
import { TestHost, type HostSpec, type TestHostOptions } from "../../host-test/facade/index.js";
import { useRedisSuite, type RedisFixture } from "../helpers/redis.js";

export const WASM = "build/ai-load-balancer.wasm";
export const CLUSTER = "outbound|8000||vllm.static";
export const REDIS_CLUSTER = "outbound|6379||redis.static";

export function hosts(n: number, health = "Healthy"): HostSpec[] {
  return Array.from({ length: n }, (_, i) => ({ address: `10.0.0.${i + 1}:8000`, health: health as HostSpec["health"] }));
}

export function glrConfig(extra: Record<string, unknown> = {}): object {
  return { lb_policy: "global_least_request", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 500, ...extra } };
}

export async function host(opts: Partial<TestHostOptions> & { configuration: object | string }): Promise<TestHost> {
  // The Redis cluster the configurations name exists (Envoy: redis_init on any other is BadArgument).
  return TestHost.create({ wasm: WASM, clusters: { [CLUSTER]: hosts(4) }, redisClusters: [REDIS_CLUSTER], logLevel: "info", ...opts });
}

export const CHAT_BODY = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello" }], max_tokens: 16 });

/** A POST chat request up to the end of its body. */
export function postChat(h: TestHost, body = CHAT_BODY, headers: Record<string, string> = {}, vm?: number) {
  const s = h.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route: "llm", headers: { "content-type": "application/json", ...headers }, vm });
  const headerAction = s.sendRequestHeaders(false);
  const bodyAction = s.sendRequestBody(body, true);
  return { s, headerAction, bodyAction };
}

/**
 * Moves the manual clock in steps, letting real Redis answer between them (one big jump would
 * fire every tick before any real reply arrives, which no real clock does).
 */
export async function advanceWithIo(h: TestHost, ms: number, step = 250): Promise<void> {
  for (let done = 0; done < ms; done += step) {
    h.advance(Math.min(step, ms - done));
    await h.redisIdle();
  }
}

/** A suite's real Redis, a client to it, and the test's host (closed and Redis flushed after each test). */
export interface RedisHostSuite { redis: RedisFixture; client: Redis; host: TestHost | null }

/** `cleanup`: more to reset after each test (e.g. FUNCTION FLUSH). */
export function useRedisHost(cleanup?: (client: Redis) => Promise<unknown>): RedisHostSuite {
  const suite = useRedisSuite();
  const t = { host: null } as RedisHostSuite;
  beforeAll(() => { t.redis = suite.server; t.client = suite.redis; });
  afterEach(async () => {
    t.host?.close();
    t.host = null;
    await t.client.flushall();
    if (cleanup) await cleanup(t.client);
  });
  return t;
}

/** A pool's loads in Redis (`<ns>:load`), host -> load. */
export async function poolLoads(client: Redis, ns: string): Promise<Record<string, number>> {
  const flat = await client.zrange(`${ns}:load`, 0, -1, "WITHSCORES");
  const out: Record<string, number> = {};
  for (let i = 0; i < flat.length; i += 2) out[flat[i]] = Number(flat[i + 1]);
  return out;
}

/** acquire.lua's reply {"OK", host, load_before} as Redis sends it (RESP), for a recorded Redis
 *  (test/lua/acquire.test.ts checks the script answers this shape). */
export function acquireOk(address: string, loadBefore = 0): string {
  const load = String(loadBefore);
  return `*3\r\n$2\r\nOK\r\n$${address.length}\r\n${address}\r\n$${load.length}\r\n${load}\r\n`;
}
