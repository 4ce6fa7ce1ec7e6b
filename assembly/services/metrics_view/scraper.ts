// metricsSource: poll — scrapes `<metricsPath>` of each known host on tick through Envoy:
// proxy_http_call to lb_config.metricsCluster, an ORIGINAL_DST cluster with use_http_header:
// true, which sends each call to the `x-envoy-original-dst-host` address. Every host is its own
// call with its own timeout, so one slow host delays nothing else. Per interval and host one VM
// of the gateway scrapes: it claims the host in shared data with CAS (the claim holds the claim
// time); the report is published through MetricsCache (shared data) for every VM.
// Failure behaviour: a refused, failed, timed-out or non-200 scrape, or a body without a load
// metric, publishes nothing (warned, throttled; a reset silently); the host's last report ages
// until it is stale. Never throws.
import * as host from "../../host/calls";
import { warnThrottled } from "../../host/warn_throttle";
import { Pair } from "../../host/pairs";
import { MetricsSettings } from "../../config/metrics_settings";
import { MetricsCache, reportFromText } from "./metrics_cache";

const HTTP_CALL_RESPONSE_HEADERS: i32 = 6; // Proxy-Wasm map type of an http call's response headers
const ORIGINAL_DST_HEADER = "x-envoy-original-dst-host";

class PendingScrape {
  /** `scrape`: the report's tag and the address (ScrapeKey), the entry in Scraper.scraping. */
  constructor(public address: string, public scrape: string, public cache: MetricsCache) {}
}

export class Scraper {
  private pending: Map<u32, PendingScrape> = new Map();
  /** Scrapes in flight, by report (settings' reportTag) and address: policies whose reports differ
   *  scrape the same pod each on its own, as their claims do. */
  private scraping: Set<string> = new Set();
  /** Scrapes started / answered with a usable body (for tests and stats). */
  started: i64 = 0;
  succeeded: i64 = 0;

  /** Starts the due scrapes of `hosts` (claims them first). */
  scrape(hosts: string[], cache: MetricsCache, now: f64): void {
    const s = cache.s;
    for (let i = 0; i < hosts.length; i++) {
      const address = hosts[i];
      const scrape = s.reportTag() + "|" + address;
      if (this.scraping.has(scrape)) continue; // this report's previous scrape is still running
      if (!this.claim(scrape, s, now)) continue;
      const headers: Pair[] = [new Pair(":method", "GET"), new Pair(":path", s.path), new Pair(":authority", address),
        new Pair(ORIGINAL_DST_HEADER, address), new Pair("accept", "text/plain")];
      const call = host.httpCall(s.cluster, headers, new ArrayBuffer(0), <u32>s.scrapeTimeoutMs);
      if (call.status != host.Status.Ok) {
        // Every pod of every tick is refused alike (an unknown cluster is BadArgument): one line per 10 s.
        warnThrottled("metrics scrape refused", address + " via " + s.cluster + ", status " + call.status.toString());
        continue;
      }
      this.started++;
      this.scraping.add(scrape);
      this.pending.set(call.token, new PendingScrape(address, scrape, cache));
    }
  }

  /** One VM per gateway, interval and report (MetricsSettings.reportTag): the claim is a
   *  timestamp replaced with CAS. */
  private claim(scrape: string, s: MetricsSettings, now: f64): bool {
    const key = "llmlb.emclaim|" + scrape;
    const cur = host.getSharedData(key);
    let cas: u32 = 0;
    if (cur.status == host.Status.Ok && cur.value.byteLength == 8) {
      const claimedAt = load<f64>(changetype<usize>(cur.value));
      if (now - claimedAt < <f64>s.scrapeIntervalMs) return false;
      cas = cur.cas;
    }
    const value = new ArrayBuffer(8);
    store<f64>(changetype<usize>(value), now);
    return host.setSharedData(key, value, cas) == host.Status.Ok;
  }

  /** proxy_on_http_call_response; false when the token is not a scrape. */
  onResponse(token: u32, bodySize: u32, now: f64): bool {
    if (!this.pending.has(token)) return false;
    const p = this.pending.get(token);
    this.pending.delete(token);
    this.scraping.delete(p.scrape);
    const status = host.getHeader(<host.MapType>HTTP_CALL_RESPONSE_HEADERS, ":status");
    // Envoy answers a failed call as the router's local reply (503 connect failure, 502 protocol
    // error, 504 timeout, with a body); a reset, a timeout after the response headers and a body
    // over 32 MiB come with no headers at all (a pod going away: not worth a warning).
    const s = p.cache.s;
    if (status === null) return true;
    // Throttled (one line per 10 s per kind): a wrong metricsPath answers 404 on every pod.
    if (status != "200") { warnThrottled("metrics scrape failed", p.address + s.path + ": status " + status); return true; }
    const body = host.getBufferBytes(host.BufferType.HttpCallResponseBody, 0, bodySize);
    if (body === null) return true;
    const report = reportFromText(Uint8Array.wrap(body), s, now, true);
    if (!report.metrics.valid) {
      warnThrottled("metrics scrape unusable", p.address + s.path + ": no " + (s.engine == "auto" ? "vLLM or SGLang" : s.engine) + " load metric");
      return true;
    }
    this.succeeded++;
    p.cache.publish(p.address, report);
    return true;
  }
}
