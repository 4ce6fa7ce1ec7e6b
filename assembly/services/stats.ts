// Plugin metrics (proxy_define_metric; Envoy exposes them as stats, per gateway process).
import * as host from "../host/calls";

export class Stats {
  private picksRedis: u32;
  private picksFallback: u32;
  private picksHeader: u32;
  private passthrough: u32;
  private shed: u32;
  private bgFailures: u32;
  private overrideRefused: u32;
  private configRejected: u32;

  constructor() {
    const C = host.MetricType.Counter;
    this.picksRedis = host.defineMetric(C, "llmlb_picks_redis_total");
    this.picksFallback = host.defineMetric(C, "llmlb_picks_local_fallback_total");
    this.picksHeader = host.defineMetric(C, "llmlb_picks_other_total");
    this.passthrough = host.defineMetric(C, "llmlb_passthrough_total");
    this.shed = host.defineMetric(C, "llmlb_shed_total");
    this.bgFailures = host.defineMetric(C, "llmlb_redis_background_failures_total");
    this.overrideRefused = host.defineMetric(C, "llmlb_override_refused_total");
    this.configRejected = host.defineMetric(C, "llmlb_config_rejected_total");
  }

  redisPick(): void { host.incrementMetric(this.picksRedis, 1); }
  fallbackPick(): void { host.incrementMetric(this.picksFallback, 1); }
  otherPick(): void { host.incrementMetric(this.picksHeader, 1); }
  passed(): void { host.incrementMetric(this.passthrough, 1); }
  shedOne(): void { host.incrementMetric(this.shed, 1); }
  redisBackgroundFailures(): void { host.incrementMetric(this.bgFailures, 1); }
  overrideRefusedOne(): void { host.incrementMetric(this.overrideRefused, 1); }
  configRejectedOne(): void { host.incrementMetric(this.configRejected, 1); }
}
