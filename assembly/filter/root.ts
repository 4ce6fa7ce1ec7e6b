// The root context (one per VM and plugin): parses the configuration into the Plugin its streams
// read, creates the streams, and forwards what arrives on the root context (ticks, Redis replies,
// http-call answers; higress-abi.md) to the Plugin.
import { RootContext, Context } from "@solo-io/proxy-runtime/assembly/index";
import * as host from "../host/calls";
import { parsePluginConfigBytes } from "../config/rules";
import { Xorshift } from "../util/prng";
import { randomSeed } from "../host/entropy";
import { Plugin } from "./plugin";
import { LbStream } from "./stream";

/** Root contexts by id, for proxy_on_redis_call_response (the SDK's map aborts on a miss). */
export const roots = new Map<u32, LbRoot>();

export class LbRoot extends RootContext {
  readonly plugin: Plugin;

  constructor(id: u32) {
    super(id);
    const rng = new Xorshift(randomSeed() ^ <u64>id);
    this.plugin = new Plugin(rng);
    roots.set(id, this);
  }

  createContext(id: u32): Context {
    return new LbStream(id, this, this.plugin) as Context;
  }

  /** The SDK's onConfigure (which decodes the bytes into a string nobody reads) is not called: the
   *  configuration's bytes go to the JSON parser as they are (rules.ts parsePluginConfigBytes). */
  onConfigure(size: u32): bool {
    const bytes: ArrayBuffer | null = size == 0 ? null : host.getBufferBytes(host.BufferType.PluginConfiguration, 0, size);
    const parsed = parsePluginConfigBytes(bytes === null ? new Uint8Array(0) : Uint8Array.wrap(bytes!));
    const cfg = parsed.config;
    if (cfg === null) {
      this.plugin.stats.configRejectedOne();
      host.log(host.LogLevel.Critical, "invalid configuration: " + parsed.error);
      return false;
    }
    // Accepted keys that do nothing here (Higress-only keys, ignored matchers): one line in all.
    const warnings = parsed.warningLine();
    if (warnings.length > 0) host.log(host.LogLevel.Warn, warnings);
    const tickMs = this.plugin.configure(cfg);
    if (tickMs > 0) host.setTickPeriod(<u32>tickMs);
    host.log(host.LogLevel.Info, "configured: " + cfg.all().length.toString() + " load-balancing config(s)");
    return true;
  }

  onTick(): void { this.plugin.tick(host.nowMillis()); }

  /** proxy_http_call answers (endpoint_metrics' scrapes); unknown tokens go to the SDK's handler. */
  onHttpCallResponse(token: u32, headers: u32, bodySize: u32, trailers: u32): void {
    if (this.plugin.onHttpCallResponse(token, bodySize, host.nowMillis())) return;
    super.onHttpCallResponse(token, headers, bodySize, trailers);
  }

  onRedisResponse(token: u32, status: u32, size: u32): void { this.plugin.onRedisResponse(token, status, size); }

  /** A shared queue of this root has items (a sibling VM's wake). */
  onQueueReady(token: u32): void { this.plugin.onQueueReady(token, host.nowMillis()); }

  /**
   * A configuration update replaces this root with a new one on the same VM; once its streams
   * have ended Envoy deletes it (host-test/README.md row 9): forget it, so nothing leaks.
   */
  onDelete(): void {
    roots.delete(this.context_id);
    this.plugin.retirePolicies();
    host.log(host.LogLevel.Info, "root context " + this.context_id.toString() + " ended; " + roots.size.toString() + " left in this VM");
  }
}
