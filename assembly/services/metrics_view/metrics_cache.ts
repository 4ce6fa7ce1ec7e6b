// Per-host parsed metrics, never parsed per request:
// - a host is looked at (its raw JSON value fingerprinted, or the shared entry read) at most every
//   reparseIntervalMs per VM; in between the cached parse is used as is;
// - a text is parsed only when its fingerprint changed, and only by one VM of the gateway: the
//   parse is published in shared data (key per target metric and host, written with CAS) and the
//   other VMs decode it instead of parsing;
// - poll source: the scraper publishes reports the same way; readers only decode.
// Freshness: poll — the report's age (scrape time) is below staleAfterMs; health_check — the text
// exists and parsed as valid metrics (Envoy does not tell when the check ran).
// Failure behaviour: never throws; a host without usable metrics gets a null report.
import * as host from "../../host/calls";
import { MetricsSettings, SOURCE_POLL } from "../../config/metrics_settings";
import { EngineMetrics, parseEngineMetricsIn } from "../../metrics/engine_metrics";
import { metricsFingerprintIn } from "../../metrics/fingerprint";
import { readGaugeIn } from "../../metrics/gauge";
import { ScratchBytes } from "../../json/unescape";
import { HostSnapshot } from "../candidates/upstream_hosts";
import { roomFor } from "../../util/host_maps";
import { HostReport, decodeReport, encodeReport } from "./codec";
import { entryOf, metricsBytesOf } from "./extract";

class CachedHost {
  checkedAtMs: f64 = -1e18;
  report: HostReport | null = null;
}

/** Parses a metrics text (UTF-8 bytes) under the settings (configured engine, target metric).
 *  `complete`: a polled body (Envoy hands it over whole), whose last line counts without its line
 *  break; Higress's health-check text may be cut at 64 KiB, so there it does not. */
export function reportFromText(text: Uint8Array, s: MetricsSettings, now: f64, complete: bool): HostReport {
  const m: EngineMetrics = parseEngineMetricsIn(text, "", complete);
  // A configured engine means: trust only that engine's metric names.
  if (s.engine != "auto" && m.engine != s.engine) m.valid = false;
  const gauge = s.targetMetric.length > 0 ? readGaugeIn(text, s.targetMetric, "", complete) : NaN;
  return new HostReport(metricsFingerprintIn(text), now, m, gauge);
}

export class MetricsCache {
  private hosts: Map<string, CachedHost> = new Map();
  // Room the hosts' metrics texts are decoded into, one at a time (nothing keeps a view of it).
  private scratch: ScratchBytes = new ScratchBytes();
  /** Parses done by this VM (for tests and stats). */
  parses: i64 = 0;

  constructor(public s: MetricsSettings) {}

  sharedKey(address: string): string {
    return "llmlb.em|" + this.s.reportTag() + "|" + address;
  }

  private entry(address: string): CachedHost {
    if (this.hosts.has(address)) return this.hosts.get(address);
    roomFor(this.hosts, address);
    const e = new CachedHost();
    this.hosts.set(address, e);
    return e;
  }

  /** The host's current report (null: none usable). `snapshot` is needed for health_check. */
  report(address: string, snapshot: HostSnapshot | null, now: f64): HostReport | null {
    const e = this.entry(address);
    if (now - e.checkedAtMs < <f64>this.s.reparseIntervalMs) return e.report;
    e.checkedAtMs = now;
    if (this.s.source == SOURCE_POLL) {
      const shared = this.readShared(address);
      if (shared !== null) e.report = shared;
      return e.report;
    }
    if (snapshot === null) return e.report;
    const hostEntry = entryOf(snapshot, address);
    if (hostEntry === null) return e.report;
    // The fingerprint covers the host's raw JSON value (its escaped text and health), which
    // changes whenever the text does: an unchanged body costs one hash, no decode, no parse.
    const len = hostEntry.valueEnd - hostEntry.valueStart;
    if (len <= 0 || hostEntry.valueEnd > snapshot.raw.byteLength) { e.report = null; return null; }
    const fp = metricsFingerprintIn(Uint8Array.wrap(snapshot.raw, hostEntry.valueStart, len));
    const cached = e.report;
    if (cached !== null && cached.fingerprint == fp) return cached;
    const shared = this.readShared(address);
    if (shared !== null && shared.fingerprint == fp) { e.report = shared; return shared; }
    const text = metricsBytesOf(snapshot, hostEntry, this.scratch);
    if (text.length == 0) { e.report = null; return null; }
    const parsed = reportFromText(text, this.s, now, false);
    parsed.fingerprint = fp;
    this.parses++;
    e.report = parsed;
    this.publish(address, parsed);
    return parsed;
  }

  /** Whether a report counts as fresh now. */
  isFresh(r: HostReport | null, now: f64): bool {
    if (r === null || !r.metrics.valid) return false;
    if (this.s.source == SOURCE_POLL) return now - r.observedAtMs < <f64>this.s.staleAfterMs;
    return true;
  }

  /** Stores a report in shared data unless a newer one is already there (CAS on the read). */
  publish(address: string, r: HostReport): void {
    const key = this.sharedKey(address);
    const cur = host.getSharedData(key);
    let cas: u32 = 0;
    if (cur.status == host.Status.Ok) {
      const old = decodeReport(String.UTF8.decode(cur.value));
      if (old !== null && old.observedAtMs > r.observedAtMs) return;
      cas = cur.cas;
    }
    // A CasMismatch means another VM wrote meanwhile: its entry is as good as ours.
    host.setSharedData(key, String.UTF8.encode(encodeReport(r)), cas);
  }

  /** When the newest of these hosts' published reports was observed (-1e18: none). */
  newestObservedMs(addresses: string[]): f64 {
    let newest: f64 = -1e18;
    for (let i = 0; i < addresses.length; i++) {
      const r = this.readShared(addresses[i]);
      if (r !== null && r.observedAtMs > newest) newest = r.observedAtMs;
    }
    return newest;
  }

  private readShared(address: string): HostReport | null {
    const cur = host.getSharedData(this.sharedKey(address));
    if (cur.status != host.Status.Ok) return null;
    return decodeReport(String.UTF8.decode(cur.value));
  }
}
