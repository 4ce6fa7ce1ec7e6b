// The Redis clients behind proxy_redis_init / proxy_redis_call, kept as Envoy keeps them: ONE
// async client per Redis cluster per worker thread, shared by every VM, root context and plugin
// on that worker (envoy cluster_manager_impl.cc ThreadLocalClusterManagerImpl ~L1212: the
// cluster's redisAsyncClient()). Audit rows 3, 4 and 12 (../shared/reference/host-fidelity-audit.md):
// - proxy_redis_init re-initialises that shared client for everyone (async_client_impl.cc
//   AsyncClientImpl::initialize): its connections are closed, so every call in flight on that
//   worker and cluster fails with NetworkError, and the AUTH credentials, db and op timeout are
//   replaced. Profile redisReinit "close-if-changed" (Higress >= 2.2.4) skips this when nothing
//   changed.
// - db and the write-batching parameters come from the init's `?k=v` query only; the query of a
//   later proxy_redis_call is ignored (only its cluster lookup name counts).
// - A call on a Redis cluster nobody initialised uses the client's defaults: no AUTH, db 0, op
//   timeout 1000 ms, 3 ms / 1024-byte batching.
// Inputs: the worker index (VM index), the cluster name as the guest passed it, the endpoint.
// Failure behaviour: never throws; closing fails the calls of the closed client (NetworkError).
import { REDIS_DEFAULT_TIMEOUT_MS, REDIS_FLUSH_DEFAULTS, type EnvoyProfile } from "../abi/envoy-profile.js";
import { parseRedisClusterName, redisLookupName } from "./cluster-name.js";
import { RedisClusterClient } from "./redis-client.js";

export interface RedisEndpoint { host: string; port: number; connectTimeoutMs?: number }

export interface RedisClientSettings {
  username: string;
  password: string;
  timeoutMs: number;
  db: number;
  bufferFlushTimeoutMs: number;
  maxBufferSizeBeforeFlush: number;
}

function uint(params: Map<string, string>, key: string, fallback: number): number {
  const v = params.get(key);
  return v !== undefined && /^\d{1,10}$/.test(v) && Number(v) <= 0xffffffff ? Number(v) : fallback;
}

/** The settings a proxy_redis_init (or, with no init, the defaults) gives the shared client. */
export function redisSettings(clusterName: string, username: string, password: string, timeoutMs: number,
  flushParams: EnvoyProfile["redisFlushParams"]): RedisClientSettings {
  const name = parseRedisClusterName(clusterName);
  const honoured = flushParams === "honoured";
  return {
    username, password, timeoutMs, db: name.db,
    bufferFlushTimeoutMs: honoured ? uint(name.params, "buffer_flush_timeout", REDIS_FLUSH_DEFAULTS.bufferFlushTimeoutMs) : REDIS_FLUSH_DEFAULTS.bufferFlushTimeoutMs,
    maxBufferSizeBeforeFlush: honoured ? uint(name.params, "max_buffer_size_before_flush", REDIS_FLUSH_DEFAULTS.maxBufferSizeBeforeFlush) : REDIS_FLUSH_DEFAULTS.maxBufferSizeBeforeFlush,
  };
}

export const defaultRedisSettings = (flushParams: EnvoyProfile["redisFlushParams"]): RedisClientSettings =>
  redisSettings("", "", "", REDIS_DEFAULT_TIMEOUT_MS, flushParams);

export const sameSettings = (a: RedisClientSettings, b: RedisClientSettings): boolean =>
  (Object.keys(a) as Array<keyof RedisClientSettings>).every((k) => a[k] === b[k]);

interface Entry { settings: RedisClientSettings; client: RedisClusterClient }

export class SharedRedisClients {
  private readonly entries = new Map<string, Entry>();
  /** proxy_redis_init calls that closed a live client (and so failed its calls in flight). */
  reinitCloses = 0;

  constructor(private readonly profile: Pick<EnvoyProfile, "redisReinit" | "redisFlushParams">) {}

  private key(worker: number, clusterName: string): string { return `${worker}|${redisLookupName(clusterName)}`; }

  init(worker: number, clusterName: string, username: string, password: string, timeoutMs: number, endpoint: RedisEndpoint): void {
    const key = this.key(worker, clusterName);
    const settings = redisSettings(clusterName, username, password, timeoutMs, this.profile.redisFlushParams);
    const old = this.entries.get(key);
    if (old && this.profile.redisReinit === "close-if-changed" && sameSettings(old.settings, settings)) return;
    if (old) { this.reinitCloses++; old.client.close(); }
    this.entries.set(key, { settings, client: newClient(settings, endpoint) });
  }

  /** The worker's client for the cluster; created with the defaults when nobody initialised it. */
  client(worker: number, clusterName: string, endpoint: RedisEndpoint): RedisClusterClient {
    const key = this.key(worker, clusterName);
    let entry = this.entries.get(key);
    if (!entry) {
      const settings = defaultRedisSettings(this.profile.redisFlushParams);
      entry = { settings, client: newClient(settings, endpoint) };
      this.entries.set(key, entry);
    }
    return entry.client;
  }

  settings(worker: number, clusterName: string): RedisClientSettings | undefined {
    return this.entries.get(this.key(worker, clusterName))?.settings;
  }

  keys(): string[] { return [...this.entries.keys()]; }

  close(): void {
    for (const e of this.entries.values()) e.client.close();
    this.entries.clear();
  }
}

function newClient(s: RedisClientSettings, endpoint: RedisEndpoint): RedisClusterClient {
  return new RedisClusterClient({
    host: endpoint.host, port: endpoint.port, username: s.username || undefined, password: s.password || undefined,
    db: s.db, timeoutMs: s.timeoutMs, connectTimeoutMs: endpoint.connectTimeoutMs,
    bufferFlushTimeoutMs: s.bufferFlushTimeoutMs, maxBufferSizeBeforeFlush: s.maxBufferSizeBeforeFlush,
  });
}
