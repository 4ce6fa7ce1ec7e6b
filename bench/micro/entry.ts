// Bench-only AssemblyScript entry (excluded from tsconfig.json: it is AssemblyScript, not
// TypeScript), compiled by bench/micro/costs.ts with the release flags (-O3, incremental runtime):
// runs the plugin's own pure code in loops inside Wasm so the host's timer measures only it.
// setInput() copies the input (a body, a metrics text or a host map) once.
import { parseJson } from "../../assembly/json/parse";
import { KeyOptions, prefixLevelKeys } from "../../assembly/prefix/keys";
import { parseEngineMetricsIn } from "../../assembly/metrics/engine_metrics";
import { Sha1 } from "../../assembly/util/sha1";
import { parseUpstreamHosts } from "../../assembly/services/candidates/upstream_hosts";
import { CandidateCache } from "../../assembly/services/candidates/candidates";
import { metricsBytesOf } from "../../assembly/services/metrics_view/extract";
import { ScratchBytes } from "../../assembly/json/unescape";
import { RequestBody } from "../../assembly/services/request/body";
import { emptyStats, fitHosts, foldObservation, tpotFeatures, ttftFeatures, TPOT_K, TTFT_K } from "../../assembly/policy/predicted_latency/model";

let input: Uint8Array = new Uint8Array(0);
const sha = new Sha1();
const scratch = new ScratchBytes();

export function inputBuffer(len: i32): usize {
  input = new Uint8Array(len);
  return input.dataStart;
}

export function inputReady(): void {}

/** prefix_cache's per-request work: parse the chat body, build blocks, SHA-1, XOR level keys. */
export function prefixKeys(iterations: i32): i32 {
  let levels = 0;
  const o = new KeyOptions();
  for (let i = 0; i < iterations; i++) {
    const r = parseJson(input);
    const body = r.value;
    if (body === null) return -1;
    levels += prefixLevelKeys(body, o, "{llmlb:llm:outbound|8000||vllm.static}").keys.length;
  }
  return levels;
}

/** global_least_request's per-request body work in tokens mode: the JSON parse alone. */
export function parseBody(iterations: i32): i32 {
  let ok = 0;
  for (let i = 0; i < iterations; i++) if (parseJson(input).ok) ok++;
  return ok;
}

/** SHA-1 of the whole input (the hashing part alone, the Wasm limit for prefix keys). */
export function sha1Only(iterations: i32): i32 {
  let x = 0;
  for (let i = 0; i < iterations; i++) {
    sha.update(input);
    x ^= sha.digest()[0];
  }
  return x;
}

/** endpoint_metrics' per-host work when a host's /metrics text (UTF-8 bytes) changed. */
export function parseMetrics(iterations: i32): i32 {
  let valid = 0;
  for (let i = 0; i < iterations; i++) if (parseEngineMetricsIn(input).valid) valid++;
  return valid;
}

/** endpoint_metrics' per-scrape work in health_check mode: read the hosts' pair map, unescape
 *  each host's `metrics` JSON string and parse it (what one VM does when every body changed). */
export function scrapeSnapshot(iterations: i32): i32 {
  let valid = 0;
  const raw = input.buffer.slice(input.byteOffset, input.byteOffset + input.byteLength);
  for (let i = 0; i < iterations; i++) {
    const snap = parseUpstreamHosts(raw);
    for (let h = 0; h < snap.hosts.length; h++) {
      if (parseEngineMetricsIn(metricsBytesOf(snap, snap.hosts[h], scratch)).valid) valid++;
    }
  }
  return valid;
}

/** The decode part of scrapeSnapshot alone: each host's `metrics` JSON string to text. */
export function decodeSnapshot(iterations: i32): i32 {
  let chars = 0;
  const raw = input.buffer.slice(input.byteOffset, input.byteOffset + input.byteLength);
  for (let i = 0; i < iterations; i++) {
    const snap = parseUpstreamHosts(raw);
    for (let h = 0; h < snap.hosts.length; h++) chars += metricsBytesOf(snap, snap.hosts[h], scratch).length;
  }
  return chars;
}

const candidateCache = new CandidateCache();
const HEALTHY: string[] = ["Healthy"];

/** The per-request candidate work of every policy: read the routed cluster's host map (as
 *  proxy_get_upstream_hosts returns it) and get the candidate set (cached while it is unchanged). */
export function candidatesFromHosts(iterations: i32): i32 {
  let size = 0;
  const raw = input.buffer.slice(input.byteOffset, input.byteOffset + input.byteLength);
  for (let i = 0; i < iterations; i++) size += candidateCache.fromSnapshot(parseUpstreamHosts(raw), HEALTHY).size;
  return size;
}

/** predicted_latency's prompt length (promptChars: every message's text length), the body parsed
 *  once before (RequestBody keeps its parse), as a pick reads it. */
export function promptChars(iterations: i32): i32 {
  const body = new RequestBody(input, false);
  let chars: i64 = 0;
  for (let i = 0; i < iterations; i++) chars += body.promptChars();
  return <i32>(chars / iterations);
}

/** predicted_latency's model work of a pick on 256 candidates after an observation: refit every
 *  host (fitHosts), then the three predictions per candidate evaluate() makes. */
export function fitAndPredict(iterations: i32): i32 {
  const n = 256;
  const t = new Array<f64[]>(n);
  const p = new Array<f64[]>(n);
  for (let h = 0; h < n; h++) {
    t[h] = emptyStats(TTFT_K);
    p[h] = emptyStats(TPOT_K);
    for (let k = 0; k < 8; k++) {
      const q = <f64>((h + k) % 8);
      foldObservation(t[h], TTFT_K, ttftFeatures(<f64>(100 * k), q, 8, 50), 20 + q * 3 + <f64>h * 0.01, 0.99);
      foldObservation(p[h], TPOT_K, tpotFeatures(q, 8), 8 + q, 0.99);
    }
  }
  let ok = 0;
  for (let i = 0; i < iterations; i++) {
    const models = fitHosts(t, p, 10, false);
    for (let h = 0; h < n; h++) {
      const m = models[h];
      if (m.predictTtft(500, 3, 8, 0, 100) + m.predictTpot(8, 8) + m.predictTpot(3, 8) > 0) ok++;
    }
  }
  return ok;
}
