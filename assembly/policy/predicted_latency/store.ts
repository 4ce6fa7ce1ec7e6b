// The shared latency model of one pool, as one VM holds it: each host's stats (model.ts), read
// from the pool's model hash in Redis (`<ns>:lat`, HGETALL every modelRefreshMs, started by a
// request: no tick needed) and updated by this VM's observations twice: folded here at once (the
// VM's next pick sees them) and sent to lua/model.lua (every gateway sees them at its next read).
// The same hash holds each host's trust in the prefix tree (cache_trust.ts), learned the same way.
// Fitted coefficients are cached until the stats or the candidate list change. The pool's open
// streams of this VM (open_streams.ts) and its sibling VMs' (sibling_streams.ts) live here too.
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
import { OpenStream, OpenStreams } from "./open_streams";
import { MAX_HELD_PUBLISHED, SIB_STALE_MS, SiblingHolds, SiblingStreams } from "./sibling_streams";
import { ReplicaRecords } from "./replica_records";
import * as host from "../../host/calls";
import { HoldList } from "./hold";
import { TRUST_DECAY, TRUST_K, trustOf } from "./cache_trust";
import { HOSTS_KEPT } from "../../util/host_maps";

export const MODEL_SCRIPT = new LuaScript("model", new ScriptText("model", gen.MODEL_DEFS), gen.MODEL_SHA, LUA_LIBRARY);

/** The model hash of a pool lives two days after its last observation. */
const MODEL_TTL_MS = "172800000";
/** A host no gateway observed for an hour is forgotten (its fields deleted by model.lua): pods come
 *  and go with new addresses, and every VM reads the whole hash every modelRefreshMs. */
export const MODEL_HOST_IDLE_MS = "3600000";
/** The cache-trust model's one feature, the intercept (read only: fold and pushGroup read it). */
const TRUST_X: f64[] = [1.0];
/** A VM reads the model hash no more bytes a ms than this (256 KiB/s): each host's three fields are
 *  ~380 bytes, so 1,000 hosts would be 760 KB/s per VM at modelRefreshMs 500 (x workers x
 *  gateways from one Redis); the sums change slowly (modelDecay's half-life is ~140 of a host's
 *  observations) and this VM's own observations are folded at once. */
export const MODEL_READ_BYTES_PER_MS: f64 = 262.144;

class HostStats {
  ttft: f64[] = emptyStats(TTFT_K);
  tpot: f64[] = emptyStats(TPOT_K);
  trust: f64[] = emptyStats(TRUST_K);
  /** When this VM last folded an observation of the host in (-1e18: never). */
  observedMs: f64 = -1e18;
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
  /** The other worker VMs' open streams on them, and this VM's record of its own. */
  readonly siblings: SiblingStreams;
  private hosts: Map<string, HostStats> = new Map();
  private reading: bool = false;
  private lastReadMs: f64 = -1e18;
  /** The earliest next read: modelRefreshMs after the last, or later for a large hash. */
  private nextReadMs: f64 = -1e18;
  /** The candidate list the fit is for (a CandidateSet's own array: one per unchanged host list). */
  private fitFor: string[] | null = null;
  private fitted: HostModel[] = [];

  /** Each host's last observation (model.lua forgets the idle ones). */
  readonly timesKey: string;

  constructor(public pool: Pool | null, public s: SloSettings, private writes: ModelWrite, vmTag: string,
    private held: HoldList) {
    this.key = pool !== null ? pool.ns + ":lat" : "";
    this.timesKey = pool !== null ? pool.ns + ":lat:at" : "";
    this.siblings = new SiblingStreams(pool !== null ? pool.ns : "", vmTag, s.shareWorkers, pool, writes.stats);
    if (pool !== null && s.shareWorkers && s.replicasMs > 0) {
      this.siblings.replicas = new ReplicaRecords(pool, vmTag, <f64>s.replicasMs, SIB_STALE_MS, writes.stats, host.nowMillis);
    }
  }

  /** Exchanges this Envoy's records with the other gateways' (sloShareReplicasMs) when this VM
   *  finds the exchange due and claims it: at a pick's start (its reply, first on the connection,
   *  comes before the pick's own reads), at a publish (a pick's new stream, a first token, an end),
   *  or from a tick while this VM's record lists anything (the streams' progress, the ends' ageing). */
  exchange(now: f64, fromTick: bool = false): void {
    const sib = this.siblings;
    const rep = sib.replicas;
    if (rep === null || (fromTick && !sib.listsAny) || !rep.due(now) || !rep.claim(now)) return;
    this.write(now, true);
    rep.send(sib.envoyRecords(now), now);
  }

  /** This VM's stream `s` ended: off the open streams, into the record's recent ends. */
  streamEnded(st: OpenStream, now: f64): void {
    this.streams.remove(st);
    this.siblings.ended(st.address, st.pickedMs, now);
    this.publish(now, true);
  }

  /** This VM's stream `st` never started: its lease was refused (no free slot), so no count ever
   *  held it and its going is no end for the siblings to take off a count. */
  streamWithdrawn(st: OpenStream, now: f64): void {
    this.streams.remove(st);
    this.publish(now, true);
  }

  /** Publishes this VM's streams and held requests on time of the pool (throttled unless `atOnce`),
   *  to the other gateways too when an exchange is due. */
  publish(now: f64, atOnce: bool = false): void {
    this.write(now, atOnce);
    this.exchange(now);
  }

  /** Writes this VM's record of the pool in the shared data (throttled unless `atOnce`). */
  private write(now: f64, atOnce: bool): void {
    const sib = this.siblings;
    if (!sib.due(now, atOnce)) return;
    sib.heldHosts.length = 0;
    sib.heldDeadlines.length = 0;
    const held = this.held;
    sib.holding = held.length > 0;
    // In deadline order (the list's), so the record keeps the earliest (MAX_HELD_PUBLISHED).
    for (let i = 0; i < held.entries.length && sib.heldHosts.length < MAX_HELD_PUBLISHED; i++) {
      const h = held.entries[i];
      if (h.r.pool !== this.pool || h.late || h.host.length == 0 || !isFinite(h.deadlineMs)) continue;
      sib.heldHosts.push(h.host);
      sib.heldDeadlines.push(h.deadlineMs);
    }
    sib.write(this.streams.lists(), now);
  }

  private of(address: string): HostStats {
    if (this.hosts.has(address)) return this.hosts.get(address);
    const h = new HostStats();
    this.hosts.set(address, h);
    return h;
  }

  /** The fitted model of each host of `hosts`, in order. */
  modelsFor(hosts: string[]): HostModel[] {
    if (hosts === this.fitFor && this.fitted.length == hosts.length) return this.fitted;
    this.forgetGone(hosts);
    const t = new Array<f64[]>(hosts.length);
    const p = new Array<f64[]>(hosts.length);
    for (let i = 0; i < hosts.length; i++) {
      const h = this.of(hosts[i]);
      t[i] = h.ttft;
      p[i] = h.tpot;
    }
    this.fitted = fitHosts(t, p, this.s.ridge, this.s.batchSlots == 0);
    this.fitFor = hosts;
    return this.fitted;
  }

  /** Hosts whose stats are kept. */
  get hostsKept(): i32 { return this.hosts.size; }

  /** Pods come and go with new addresses (util/host_maps.ts): past HOSTS_KEPT hosts, the stats of
   *  those not among `hosts` (the candidates) go. A read replaces the map, but without Redis, or
   *  while it is unreachable, nothing else would drop them; a host that comes back is read or
   *  learned again. */
  private forgetGone(hosts: string[]): void {
    if (this.hosts.size <= HOSTS_KEPT) return;
    const keep = new Set<string>();
    for (let i = 0; i < hosts.length; i++) keep.add(hosts[i]);
    const all = this.hosts.keys();
    for (let i = 0; i < all.length; i++) if (!keep.has(all[i])) this.hosts.delete(all[i]);
  }

  /** At a pick's start: the records exchange when one is due (sloShareReplicasMs), and a read of
   *  the shared stats when the last one is older than modelRefreshMs. */
  refresh(now: f64): void {
    this.exchange(now);
    const pool = this.pool;
    if (pool === null || this.reading || now < this.nextReadMs) return;
    this.lastReadMs = now;
    this.nextReadMs = now + <f64>this.s.refreshMs;
    this.reading = pool.redis.command(["HGETALL", this.key], new ModelRead(this), now);
  }

  onRead(ok: bool, reply: RespValue | null): void {
    this.reading = false;
    if (!ok || reply === null || reply.isError()) return;
    const items = reply.items;
    let bytes = 0;
    for (let i = 0; i < items.length; i++) bytes += items[i].str.length;
    this.nextReadMs = max(this.nextReadMs, this.lastReadMs + <f64>bytes / MODEL_READ_BYTES_PER_MS);
    // The hash is the fleet's model: a host it no longer holds (idle, forgotten by model.lua) is
    // forgotten here too, so this VM holds the hosts observed lately, as the hash does. A host this
    // VM observed since the read was sent keeps what the reply does not hold (its write, sent
    // after the read on the same connection, is not in it).
    const old = this.hosts;
    this.hosts = new Map();
    const kept = old.keys();
    for (let i = 0; i < kept.length; i++) {
      const h = old.get(kept[i]);
      if (h.observedMs >= this.lastReadMs) this.hosts.set(kept[i], h);
    }
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
      } else if (kind == 99) { // 'c': the trust in the prefix tree
        const v = parseStats(TRUST_K, items[i + 1].str);
        if (v !== null) h.trust = v;
      }
    }
    this.fitFor = null;
  }

  /** How far the prefix tree's word holds at `address` (1 until an answer from there said otherwise). */
  trustOf(address: string): f64 {
    return this.hosts.has(address) ? trustOf(this.hosts.get(address).trust) : 1.0;
  }

  /** One finished request's observations (a NaN y is not observed): TTFT, TPOT, and found / said
   *  of the prompt the tree said was cached there (`trustY`, cache_trust.ts). */
  observe(address: string, ttftX: f64[], ttftY: f64, tpotX: f64[], tpotY: f64, trustY: f64, now: f64): void {
    const h = this.of(address);
    h.observedMs = now;
    const args: string[] = [MODEL_TTL_MS, MODEL_HOST_IDLE_MS];
    const decay = this.s.decay;
    // An observation the fold refuses (not finite) is not sent either: model.lua refuses it too.
    if (!isNaN(ttftY) && foldObservation(h.ttft, TTFT_K, ttftX, ttftY, decay)) {
      pushGroup(args, address + "|b", decay, ttftX, ttftY);
    }
    if (!isNaN(tpotY) && foldObservation(h.tpot, TPOT_K, tpotX, tpotY, decay)) {
      pushGroup(args, address + "|p", decay, tpotX, tpotY);
    }
    if (!isNaN(trustY) && foldObservation(h.trust, TRUST_K, TRUST_X, trustY, TRUST_DECAY)) {
      pushGroup(args, address + "|c", TRUST_DECAY, TRUST_X, trustY);
    }
    if (args.length == 2) return;
    this.fitFor = null;
    const pool = this.pool;
    if (pool !== null && !pool.redis.evalScript(MODEL_SCRIPT, [this.key, this.timesKey], args, this.writes, now)) this.writes.stats.redisBackgroundFailures();
  }
}

function pushGroup(args: string[], field: string, decay: f64, x: f64[], y: f64): void {
  args.push(field);
  args.push(decay.toString());
  args.push(x.length.toString());
  args.push(y.toString());
  for (let i = 0; i < x.length; i++) args.push(x[i].toString());
}

/** The pool models of one policy (one per pool; one VM-local model without Redis). */
export class ModelStore {
  private pools: Map<string, PoolModel> = new Map();
  private readonly writes: ModelWrite;

  /** The held requests' version the records show. */
  private heldVersion: i32 = -1;

  /** `held`: the policy's held requests (published with each pool's record). */
  constructor(public s: SloSettings, stats: Stats, private vmTag: string, private held: HoldList) {
    this.writes = new ModelWrite(stats);
  }

  /** Every tick: each pool's record is republished while it lists anything (the streams'
   *  progress) or when whether this VM holds requests changed, and exchanged with the other
   *  gateways' when due (sloShareReplicasMs). */
  onTick(now: f64): void {
    const holding = this.held.length > 0;
    const all = this.pools.values();
    for (let i = 0; i < all.length; i++) {
      if (all[i].siblings.wantsTick(now, holding)) all[i].publish(now, true);
      all[i].exchange(now, true);
    }
  }

  /** After a hold or a pass: every pool's record shows the held requests, and whether this VM
   *  holds any (its siblings wake it), at once; after a tick's pass only if they changed (a pass
   *  after an end or a wake writes the streams' progress too, when the siblings' passes run). */
  heldChanged(now: f64, onlyIfChanged: bool = false): void {
    if (onlyIfChanged && this.held.version == this.heldVersion) return;
    this.heldVersion = this.held.version;
    const all = this.pools.values();
    for (let i = 0; i < all.length; i++) all[i].publish(now, true);
  }

  /** Replaced by a new configuration: its records no longer count as workers sharing. */
  retire(): void {
    const all = this.pools.values();
    for (let i = 0; i < all.length; i++) all[i].siblings.retire();
  }

  /** A sibling woke this VM: every pool's records are read again at the next pick or pass. */
  invalidate(): void {
    const all = this.pools.values();
    for (let i = 0; i < all.length; i++) all[i].siblings.stale = true;
  }

  /** The sibling VMs' held requests on time on every pool, by deadline (after a read of their records). */
  siblingHolds(now: f64): SiblingHolds | null {
    const all = this.pools.values();
    let out: SiblingHolds | null = null;
    for (let i = 0; i < all.length; i++) {
      const sib = all[i].siblings;
      if (!sib.enabled) return null;
      sib.refresh(now);
      const h = sib.held;
      if (h.length == 0) continue;
      if (all.length == 1) return h;
      if (out === null) out = new SiblingHolds();
      for (let j = 0; j < h.length; j++) out.add(h.hosts[j], h.deadlines[j], h.pools[j]);
    }
    return out;
  }

  of(pool: Pool | null): PoolModel {
    const k = pool !== null ? pool.ns : "";
    if (this.pools.has(k)) return this.pools.get(k);
    const m = new PoolModel(pool, this.s, this.writes, this.vmTag, this.held);
    this.pools.set(k, m);
    return m;
  }
}
