// endpoint_metrics' prefix term (scoring: weighted, prefixWeight > 0): the request's prefix level
// keys (the same keys and tree as prefix_cache), read with one MGET before the pick, and pointed
// at the chosen host after it (lua/prefix_write.lua, fire and forget).
// Failure behaviour: no pool, no body, non-JSON body -> no keys (no prefix signal); a failed
// write only loses affinity and is logged.
import { LbConfig } from "../../config/lb_config";
import { SCORING_WEIGHTED } from "../../config/metrics_settings";
import * as host from "../../host/calls";
import { KeyOptions, prefixLevelKeys } from "../../prefix/keys";
import { RedisReplyHandler } from "../../redis/client";
import { RespValue } from "../../redis/resp";
import { PREFIX_WRITE_SCRIPT } from "../../services/lease/scripts";
import { LbRequest } from "../../services/request/request";
import { warnThrottled } from "../../host/warn_throttle";

/** Fire-and-forget level writes: a failure only loses affinity, it is logged. */
export class PrefixWrites extends RedisReplyHandler {
  onReply(ok: bool, reply: RespValue | null): void {
    if (!ok || (reply !== null && reply.isError())) warnThrottled("prefix_write failed", reply !== null ? reply.str : "");
  }
}

/** The values an MGET answered ("" for a missing key; all "" when the read failed). */
export function mgetValues(ok: bool, reply: RespValue | null, n: i32): string[] {
  const values = new Array<string>(n).fill("");
  if (ok && reply !== null && !reply.isError()) {
    for (let i = 0; i < reply.items.length && i < values.length; i++) values[i] = reply.items[i].isNull() ? "" : reply.items[i].str;
  }
  return values;
}

/** The request's prefix level keys when the weighted prefix scorer is on; [] otherwise. */
export function prefixKeysOf(cfg: LbConfig, r: LbRequest, keyOptions: KeyOptions): string[] {
  const settings = cfg.metrics;
  const pool = r.pool;
  const body = r.body;
  if (settings.scoring != SCORING_WEIGHTED || settings.prefixWeight <= 0 || pool === null || body === null) return [];
  const json = body.json();
  if (json === null) return [];
  return prefixLevelKeys(json, keyOptions, pool.ns).keys;
}

/** Points the request's prefix levels at the chosen host (unless they all do already). */
export function recordPrefix(cfg: LbConfig, r: LbRequest, keys: string[], values: string[], chosen: string, writes: PrefixWrites): void {
  let same = true;
  for (let i = 0; i < values.length; i++) if (values[i] != chosen) { same = false; break; }
  if (same) return;
  const pool = r.pool!;
  pool.redis.evalScript(PREFIX_WRITE_SCRIPT, keys, [chosen, cfg.prefix.keyTtlSeconds.toString()], writes, host.nowMillis());
}
