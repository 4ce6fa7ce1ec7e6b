// Text form of a parsed host report, for shared data: lets every VM of a gateway reuse one VM's
// parse (health_check source) or one VM's scrape (poll source) instead of parsing again.
// Layout: one field per line — version, fingerprint (hex), observed-at ms, running, waiting, kv,
// flags (hasKv valid loraSeen as 0/1 chars), maxLora, engine, running adapters, waiting adapters
// (comma-joined, as vLLM prints them; in a name, `%` and a line break are written `%25` and
// `%0A`: a label value may hold an escaped `\n`, which would otherwise add a field), gauge.
// Failure behaviour: decode() returns null for anything it does not recognise (the caller then
// parses the text itself). Pure.
import { EngineMetrics } from "../../metrics/engine_metrics";

const VERSION = "em1";

export class HostReport {
  constructor(public fingerprint: u64, public observedAtMs: f64, public metrics: EngineMetrics, public gauge: f64) {}
}

function flag(b: bool): string { return b ? "1" : "0"; }

function splitList(s: string): string[] {
  const out = new Array<string>();
  if (s.length == 0) return out;
  const parts = s.split(",");
  for (let i = 0; i < parts.length; i++) if (parts[i].length > 0) out.push(parts[i].replaceAll("%0A", "\n").replaceAll("%25", "%"));
  return out;
}

function joinList(names: string[]): string {
  let out = "";
  for (let i = 0; i < names.length; i++) {
    if (i > 0) out += ",";
    out += names[i].replaceAll("%", "%25").replaceAll("\n", "%0A");
  }
  return out;
}

export function encodeReport(r: HostReport): string {
  const m = r.metrics;
  return VERSION + "\n" + r.fingerprint.toString(16) + "\n" + r.observedAtMs.toString() + "\n" +
    m.running.toString() + "\n" + m.waiting.toString() + "\n" + m.kvUsage.toString() + "\n" +
    flag(m.hasKv) + flag(m.valid) + flag(m.loraSeen) + "\n" + m.maxLora.toString() + "\n" + m.engine + "\n" +
    joinList(m.runningLora) + "\n" + joinList(m.waitingLora) + "\n" + r.gauge.toString();
}

export function decodeReport(text: string): HostReport | null {
  const f = text.split("\n");
  if (f.length != 12 || f[0] != VERSION || f[6].length != 3) return null;
  const fp = U64.parseInt(f[1], 16);
  const m = new EngineMetrics();
  m.running = F64.parseFloat(f[3]);
  m.waiting = F64.parseFloat(f[4]);
  m.kvUsage = F64.parseFloat(f[5]);
  m.hasKv = f[6].charCodeAt(0) == 49;
  m.valid = f[6].charCodeAt(1) == 49;
  m.loraSeen = f[6].charCodeAt(2) == 49;
  m.maxLora = I32.parseInt(f[7]);
  m.engine = f[8];
  m.runningLora = splitList(f[9]);
  m.waitingLora = splitList(f[10]);
  const at = F64.parseFloat(f[2]);
  if (isNaN(at) || isNaN(m.running) || isNaN(m.waiting) || isNaN(m.kvUsage)) return null;
  return new HostReport(fp, at, m, F64.parseFloat(f[11]));
}
