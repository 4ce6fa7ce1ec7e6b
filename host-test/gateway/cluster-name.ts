// Envoy cluster names as Higress builds them (higress-abi.md "Higress imports" and "Plugin
// configuration"): `outbound|<port>|<subset>|<fqdn>` (subset usually empty), and for
// proxy_redis_call the same name optionally followed by `?db=N&buffer_flush_timeout=..`.
// Inputs: any string. Failure behaviour: never throws; parseOutboundClusterName returns null for
// names of another shape, parseRedisClusterName falls back to db 0 for a missing or invalid db.

export interface RedisClusterName {
  /** The cluster name used for the lookup: everything before the first `?`. */
  lookup: string;
  /** Database index to SELECT on new connections (0 = no SELECT). */
  db: number;
  /** All `?k=v&...` parameters, e.g. buffer_flush_timeout, max_buffer_size_before_flush. */
  params: Map<string, string>;
}

export interface OutboundClusterName {
  port: number;
  fqdn: string;
  /** Istio subset (the third field); "" for Higress's `outbound|port||fqdn`. */
  subset: string;
}

/** The cluster lookup name alone (everything before the first `?`): cheap, for every call. */
export function redisLookupName(name: string): string {
  const q = name.indexOf("?");
  return q < 0 ? name : name.slice(0, q);
}

function splitQuery(name: string): { head: string; query: string } {
  const head = redisLookupName(name);
  return { head, query: head.length < name.length ? name.slice(head.length + 1) : "" };
}

/** The host strips everything after `?` for the lookup and uses `db` for SELECT (higress-abi.md). */
export function parseRedisClusterName(name: string): RedisClusterName {
  const { head, query } = splitQuery(name);
  const params = new Map<string, string>(new URLSearchParams(query));
  const dbText = params.get("db") ?? "";
  const db = /^\d+$/.test(dbText) ? Number(dbText) : 0;
  return { lookup: head, db, params };
}

/** `outbound|8000||vllm.static` -> { port: 8000, fqdn: "vllm.static", subset: "" }; else null. */
export function parseOutboundClusterName(name: string): OutboundClusterName | null {
  const parts = splitQuery(name).head.split("|");
  if (parts.length !== 4 || parts[0] !== "outbound") return null;
  const [, portText, subset, fqdn] = parts as [string, string, string, string];
  if (!/^\d+$/.test(portText)) return null;
  const port = Number(portText);
  if (port < 1 || port > 65535 || fqdn === "") return null;
  return { port, fqdn, subset };
}
