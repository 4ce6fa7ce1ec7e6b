// The shared latency model of one pool, as one VM holds it: each host's stats (model.ts), read
// from the pool's model hash in Redis (`<ns>:lat`, HGETALL every modelRefreshMs, started by a
// request: no tick needed) and updated by this VM's observations twice: folded here at once (the
// VM's next pick sees them) and sent to lua/model.lua (every gateway sees them at its next read).
// Fitted coefficients are cached until the stats or the candidate list change. The pool's open
// streams of this VM (open_streams.ts) live here too.
// Failure behaviour: a failed read keeps the previous stats; a failed write is counted and only
// loses that observation for the other gateways; without Redis the model is this VM's alone.
import { RedisReplyHandler, LuaScript } from "../../redis/client";
import { RespValue } from "../../redis/resp";
import { Pool } from "../../services/lease/pool";
import { Stats } from "../../services/stats";
import { SloSettings } from "../../config/slo_settings";
import * as gen from "../../generated/lua";
import { ScriptText } from "../../services/lease/lua_text";
import { LUA_LIBRARY } from "../../services/lease/scripts";
import { HostModel, TTFT_K, TPOT_K, emptyStats, fitHosts, foldObservation, parseStats } from "./model";
import { OpenStreams } from "./open_streams";

export const MODEL_SCRIPT = new LuaScript("model", new ScriptText("model", gen.MODEL_DEFS), gen.MODEL_SHA, LUA_LIBRARY);

/** The model hash of a pool lives two days after its last observation. */
const MODEL_TTL_MS = "172800000";

class HostStats {
  ttft: f64[] = emptyStats(TTFT_K);
  tpot: f64[] = emptyStats(TPOT_K);
}

class ModelRead extends RedisReplyHandler {
  constructor(public m: PoolModel) { super(); }
  onReply(ok: bool, reply: RespValue | null): void { this.m.onRead(ok, reply); }
}

class ModelWrite extends RedisReplyHandler {
  constructor(public stats: Stats) { super(); }
  onReply(ok: bool, reply: RespValue | null): void {
    if (!ok || reply === null || reply.isError()) this.stats.redisBackgroundFailures();
  }
}

export class PoolModel {
  readonly key: string;
  /** This VM's open streams on the pool's hosts (the slot wait). */
  readonly streams: OpenStreams = new OpenStreams();
  private hosts: Map<string, HostStats> = new Map();
  private reading: bool = false;
  private lastReadMs: f64 = -1e18;
  private fitFor: string = "";
  private fitted: HostModel[] = [];

  constructor(public pool: Pool | null, public s: SloSettings, private writes: ModelWrite) {
    this.key = pool !== null ? pool.ns + ":lat" : "";
  }

  private of(address: string): HostStats {
    if (this.hosts.has(address)) return this.hosts.get(address);
    const h = new HostStats();
    this.hosts.set(address, h);
    return h;
  }

  /** The fitted model of each host of `hosts`, in order. */
  modelsFor(hosts: string[]): HostModel[] {
    const sig = hosts.join(",");
    if (sig == this.fitFor && this.fitted.length == hosts.length) return this.fitted;
    const t = new Array<f64[]>(hosts.length);
    const p = new Array<f64[]>(hosts.length);
    for (let i = 0; i < hosts.length; i++) {
      const h = this.of(hosts[i]);
      t[i] = h.ttft;
      p[i] = h.tpot;
    }
    this.fitted = fitHosts(t, p, this.s.ridge);
    this.fitFor = sig;
    return this.fitted;
  }

  /** Starts a read of the shared stats when the last one is older than modelRefreshMs. */
  refresh(now: f64): void {
    const pool = this.pool;
    if (pool === null || this.reading || now - this.lastReadMs < <f64>this.s.refreshMs) return;
    this.lastReadMs = now;
    this.reading = pool.redis.command(["HGETALL", this.key], new ModelRead(this), now);
  }

  onRead(ok: bool, reply: RespValue | null): void {
    this.reading = false;
    if (!ok || reply === null || reply.isError()) return;
    const items = reply.items;
    for (let i = 0; i + 1 < items.length; i += 2) {
      const field = items[i].str;
      const bar = field.lastIndexOf("|");
      if (bar <= 0 || bar != field.length - 2) continue;
      const kind = field.charCodeAt(bar + 1);
      const h = this.of(field.substring(0, bar));
      if (kind == 98) { // 'b': base TTFT (before 'b', 't' held 4 features: ignored)
        const v = parseStats(TTFT_K, items[i + 1].str);
        if (v !== null) h.ttft = v;
      } else if (kind == 112) { // 'p'
        const v = parseStats(TPOT_K, items[i + 1].str);
        if (v !== null) h.tpot = v;
      }
    }
    this.fitFor = "";
  }

  /** One finished request's observations (a NaN y is not observed). */
  observe(address: string, ttftX: f64[], ttftY: f64, tpotX: f64[], tpotY: f64, now: f64): void {
    const h = this.of(address);
    const args: string[] = [this.s.decay.toString(), MODEL_TTL_MS];
    if (!isNaN(ttftY)) {
      foldObservation(h.ttft, TTFT_K, ttftX, ttftY, this.s.decay);
      pushGroup(args, address + "|b", ttftX, ttftY);
    }
    if (!isNaN(tpotY)) {
      foldObservation(h.tpot, TPOT_K, tpotX, tpotY, this.s.decay);
      pushGroup(args, address + "|p", tpotX, tpotY);
    }
    if (args.length == 2) return;
    this.fitFor = "";
    const pool = this.pool;
    if (pool !== null && !pool.redis.evalScript(MODEL_SCRIPT, [this.key], args, this.writes, now)) this.writes.stats.redisBackgroundFailures();
  }
}

function pushGroup(args: string[], field: string, x: f64[], y: f64): void {
  args.push(field);
  args.push(x.length.toString());
  args.push(y.toString());
  for (let i = 0; i < x.length; i++) args.push(x[i].toString());
}

/** The pool models of one policy (one per pool; one VM-local model without Redis). */
export class ModelStore {
  private pools: Map<string, PoolModel> = new Map();
  private readonly writes: ModelWrite;

  constructor(public s: SloSettings, stats: Stats) {
    this.writes = new ModelWrite(stats);
  }

  of(pool: Pool | null): PoolModel {
    const k = pool !== null ? pool.ns : "";
    if (this.pools.has(k)) return this.pools.get(k);
    const m = new PoolModel(pool, this.s, this.writes);
    this.pools.set(k, m);
    return m;
  }
}
