// prefix_cache: requests sharing a conversation prefix go to the host that served it (its KV
// cache likely still holds the prefix), unless that host is overloaded (load gate). The plugin
// computes the level keys (assembly/prefix/keys.ts) and one atomic script call (lua/prefix.lua)
// walks the prefix tree, applies the gate, takes the lease and rewrites the path.
// Inputs: the body (messages / prompt), candidates, cost. Config: prefix settings
// (config/prefix_settings.ts) and the common lease keys.
// Failure behaviour: no pool, no body, a truncated or non-JSON body, or a body without usable
// blocks -> plain least request; Redis unavailable -> Accounting's per-VM fallback.
import { Policy } from "./policy";
import { Verdict } from "../services/request/verdict";
import { LbRequest } from "../services/request/request";
import { Services } from "../services/services";
import { LbConfig } from "../config/lb_config";
import { AcquireCall } from "../services/lease/accounting";
import { PREFIX_SCRIPT } from "../services/lease/scripts";
import { KeyOptions, keyOptionsFrom, prefixLevelKeys } from "../prefix/keys";

export class PrefixCachePolicy extends Policy {
  private readonly keyOptions: KeyOptions;
  /** ARGV 8..11 of prefix.lua: key_ttl_s, gate_abs, gate_rel, gate_cap. */
  private readonly gateArgs: string[];

  constructor(cfg: LbConfig, services: Services) {
    super(cfg, services);
    const p = cfg.prefix;
    this.keyOptions = keyOptionsFrom(p);
    this.gateArgs = [p.keyTtlSeconds.toString(), p.gateAbs.toString(), p.gateRel.toString(), p.gateCap.toString()];
  }

  decide(r: LbRequest): Verdict {
    const c = r.candidates();
    if (c.size == 0) return Verdict.Pass;
    const accounting = this.services.accounting;
    const pool = r.pool;
    const body = r.body;
    if (pool === null || body === null) return accounting.acquireLeast(r, c);
    const json = body.json();
    if (json === null) return accounting.acquireLeast(r, c);
    const levels = prefixLevelKeys(json, this.keyOptions, pool.ns);
    if (levels.keys.length == 0) return accounting.acquireLeast(r, c);
    return accounting.acquire(r, c, new AcquireCall(PREFIX_SCRIPT, levels.keys, this.gateArgs, "prefix_miss"));
  }
}
