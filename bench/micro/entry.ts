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
