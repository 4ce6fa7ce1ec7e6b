// Plugin metrics (proxy_define_metric; Envoy keeps one set per gateway process, shared by its
// worker VMs, and prints them on /stats/prometheus without its `wasmcustom.` namespace).
// Labels are written into the name the proxy-wasm SDK way, `tag=.=value;.;` before the metric name
// (stat_names.ts); a gateway whose bootstrap extracts these tags (Higress/Istio `extraStatTags`:
// policy, reason, priority, kind; README "Metrics") prints them as labels:
//   llmlb_picks_total{policy="prefix_cache",reason="prefix_hit"} 12
// Cost: every metric is defined once per VM (at start or configuration); the request path only
// looks an id up (reason strings in a small map per policy) and calls proxy_increment_metric or
// proxy_record_metric; no string is built per request. Histograms are in milliseconds.
// Failure behaviour: a metric the host refuses to define is skipped (host/calls ignores its id).
import * as host from "../host/calls";
import { REDIS_FAIL_KINDS, RedisObserver } from "../redis/observer";
import { PRIORITY_HIGH, PRIORITY_LOW } from "./request/request";
import { reasonKey, reasonLabel, reasonsOf, tag } from "./stat_names";

/**
 * One VM's part of a gauge summed over its Envoy's VMs (and pools): set() moves the gauge by the
 * part's change; once retired (a new configuration replaced its owner) the part stays 0.
 */
export class GaugePart {
  private part: i64 = 0;
  private retired: bool = false;
  constructor(private metric: u32) {}

  set(n: i64): void {
    const now: i64 = this.retired ? 0 : n;
    if (now != this.part) host.incrementMetric(this.metric, now - this.part);
    this.part = now;
  }

  retire(): void {
    this.set(0);
    this.retired = true;
  }
}

/** At most this many reasons per policy are given their own series; later ones count as "other". */
const MAX_REASONS_PER_POLICY = 24;

/** One policy's counters: picks by reason (defined on first sight past the known ones) and passes. */
class PolicyStats {
  readonly reasons: Map<string, u32> = new Map();
  readonly passthrough: u32;

  constructor(public policy: string) {
    this.passthrough = host.defineMetric(host.MetricType.Counter, tag("policy", policy) + "llmlb_passthrough_total");
    const known = reasonsOf(policy);
    for (let i = 0; i < known.length; i++) this.reasonId(known[i]);
  }

  reasonId(reason: string): u32 {
    if (this.reasons.has(reason)) return this.reasons.get(reason);
    const label = this.reasons.size < MAX_REASONS_PER_POLICY ? reasonLabel(this.policy, reason) : "other";
    const id = host.defineMetric(host.MetricType.Counter, tag("policy", this.policy) + tag("reason", label) + "llmlb_picks_total");
    this.reasons.set(reason, id);
    return id;
  }
}

export class Stats extends RedisObserver {
  private policies: Map<string, PolicyStats> = new Map();
  private shedLow: u32;
  private shedNormal: u32;
  private shedHigh: u32;
  private bgFailures: u32;
  private overrideRefused: u32;
  private configRejected: u32;
  private redisDuration: u32;
  private redisFailures: u32[] = [];
  private breakersOpen: u32;
  private reclaimed: u32;
  private metricsAge: u32;
  // Gateway-side queueing (services/queue/admission.ts): depth and wait of queued requests.
  private queueDepth: u32;
  private queueWait: u32;
  private queueEnteredTotal: u32;
  private queueAdmittedTotal: u32;
  private queueTimeoutsTotal: u32;
  // predicted_latency's late binding (sloHoldMs): requests held at the gateway, and for how long.
  private sloHeldNow: u32;
  private sloHold: u32;
  private sloSlotRefusedTotal: u32;
  private sloWorkersSharing: u32;
  private sloReplicasSeen: u32;
  private sloInterferenceAvoidedTotal: u32;
  private sloInterferenceHeldTotal: u32;

  constructor() {
    super();
    const C = host.MetricType.Counter;
    const G = host.MetricType.Gauge;
    const H = host.MetricType.Histogram;
    this.shedLow = host.defineMetric(C, tag("priority", "low") + "llmlb_shed_total");
    this.shedNormal = host.defineMetric(C, tag("priority", "normal") + "llmlb_shed_total");
    this.shedHigh = host.defineMetric(C, tag("priority", "high") + "llmlb_shed_total");
    this.bgFailures = host.defineMetric(C, "llmlb_redis_background_failures_total");
    this.overrideRefused = host.defineMetric(C, "llmlb_override_refused_total");
    this.configRejected = host.defineMetric(C, "llmlb_config_rejected_total");
    this.redisDuration = host.defineMetric(H, "llmlb_redis_call_duration_ms");
    for (let i = 0; i < REDIS_FAIL_KINDS.length; i++) {
      this.redisFailures.push(host.defineMetric(C, tag("kind", REDIS_FAIL_KINDS[i]) + "llmlb_redis_failures_total"));
    }
    this.breakersOpen = host.defineMetric(G, "llmlb_redis_breakers_open");
    this.reclaimed = host.defineMetric(C, "llmlb_leases_reclaimed_total");
    this.metricsAge = host.defineMetric(G, "llmlb_metrics_age_ms");
    this.queueDepth = host.defineMetric(G, "llmlb_queue_depth");
    this.queueWait = host.defineMetric(H, "llmlb_queue_wait_ms");
    this.queueEnteredTotal = host.defineMetric(C, "llmlb_queue_entered_total");
    this.queueAdmittedTotal = host.defineMetric(C, "llmlb_queue_admitted_total");
    this.queueTimeoutsTotal = host.defineMetric(C, "llmlb_queue_timeouts_total");
    this.sloHeldNow = host.defineMetric(G, "llmlb_slo_held");
    this.sloHold = host.defineMetric(H, "llmlb_slo_hold_ms");
    this.sloSlotRefusedTotal = host.defineMetric(C, "llmlb_slo_slot_refused_total");
    this.sloWorkersSharing = host.defineMetric(G, "llmlb_slo_workers_sharing");
    this.sloReplicasSeen = host.defineMetric(G, "llmlb_slo_replicas_seen");
    this.sloInterferenceAvoidedTotal = host.defineMetric(C, "llmlb_slo_interference_avoided_total");
    this.sloInterferenceHeldTotal = host.defineMetric(C, "llmlb_slo_interference_held_total");
  }

  /** At configuration: the policy's counters (its known reasons at 0) exist before traffic. */
  definePolicy(policy: string): void { this.forPolicy(policy); }

  private forPolicy(policy: string): PolicyStats {
    if (this.policies.has(policy)) return this.policies.get(policy);
    const p = new PolicyStats(policy);
    this.policies.set(policy, p);
    return p;
  }

  /** A pick applied to the stream (`reason` as in the debug header). */
  picked(policy: string, reason: string): void { host.incrementMetric(this.forPolicy(policy).reasonId(reasonKey(reason)), 1); }
  /** The route's own load balancing decides (policy passed, or a bodiless request passed through). */
  passed(policy: string): void { host.incrementMetric(this.forPolicy(policy).passthrough, 1); }
  shed(priority: i32): void {
    host.incrementMetric(priority == PRIORITY_HIGH ? this.shedHigh : priority == PRIORITY_LOW ? this.shedLow : this.shedNormal, 1);
  }
  redisBackgroundFailures(): void { host.incrementMetric(this.bgFailures, 1); }
  overrideRefusedOne(): void { host.incrementMetric(this.overrideRefused, 1); }
  configRejectedOne(): void { host.incrementMetric(this.configRejected, 1); }
  leasesReclaimed(n: i64): void { if (n > 0) host.incrementMetric(this.reclaimed, n); }
  /** Age of the freshest endpoint metrics of the stalest policy (ms), set on tick. */
  metricsAgeMs(ms: f64): void { host.recordMetric(this.metricsAge, <u64>max(ms, 0)); }
  /** A request started waiting in the queue (Redis answered QUEUED). The depth gauge is moved by
   *  +-1, never set, because Envoy shares it between the process's worker VMs. */
  queueEntered(): void {
    host.incrementMetric(this.queueDepth, 1);
    host.incrementMetric(this.queueEnteredTotal, 1);
  }
  /** A queued request stopped waiting, however (admitted, timed out, stream ended, new configuration). */
  queueLeft(waitedMs: f64): void {
    host.incrementMetric(this.queueDepth, -1);
    host.recordMetric(this.queueWait, <u64>max(waitedMs, 0));
  }
  /** A queued request was admitted (after queueLeft). */
  queueAdmitted(): void { host.incrementMetric(this.queueAdmittedTotal, 1); }
  /** A request waited queueMaxWaitMs and is shed. */
  queueTimedOut(): void { host.incrementMetric(this.queueTimeoutsTotal, 1); }
  /** predicted_latency held a request at the gateway (moved by +-1, as the queue depth). */
  sloHeld(): void { host.incrementMetric(this.sloHeldNow, 1); }
  /** A request sent to a free slot found it taken by another VM (Redis refused the charge): held again. */
  sloSlotRefused(): void { host.incrementMetric(this.sloSlotRefusedTotal, 1); }
  /** A request sent past the pod of lowest TTFT in its TPOT-fit band (without an SLO: of lowest
   *  latency), where its prefill would have made more streams miss their TPOT SLO (sloInterference). */
  sloInterferenceAvoided(): void { host.incrementMetric(this.sloInterferenceAvoidedTotal, 1); }
  /** A new request held at the gateway though its pod had a free slot: its prefill would have made
   *  streams there miss their TPOT SLO, and it could wait (sloInterferenceHold). */
  sloInterferenceHeld(): void { host.incrementMetric(this.sloInterferenceHeldTotal, 1); }
  /** A pool's part of llmlb_slo_workers_sharing: 1 while this VM's record sees another worker's
   *  (sloShareWorkers); the gauge is the worker VMs that share, per pool. */
  sloSharingPart(): GaugePart { return new GaugePart(this.sloWorkersSharing); }
  /** A pool's part of llmlb_slo_replicas_seen: the other gateways' VMs whose records this VM read
   *  last (from its Envoy's last exchange, sloShareReplicasMs); the gauge sums them over the pools
   *  and VMs of this Envoy. */
  sloReplicasPart(): GaugePart { return new GaugePart(this.sloReplicasSeen); }
  /** A held request stopped waiting, however (sent, shed, gone, new configuration). */
  sloHoldEnded(heldMs: f64): void {
    host.incrementMetric(this.sloHeldNow, -1);
    host.recordMetric(this.sloHold, <u64>max(heldMs, 0));
  }

  // RedisObserver (the Redis clients of this VM report here).
  replied(ms: f64): void { host.recordMetric(this.redisDuration, <u64>max(ms, 0)); }
  failed(kind: i32): void { if (kind >= 0 && kind < this.redisFailures.length) host.incrementMetric(this.redisFailures[kind], 1); }
  breakerChanged(open: bool): void { host.incrementMetric(this.breakersOpen, open ? 1 : -1); }
}
