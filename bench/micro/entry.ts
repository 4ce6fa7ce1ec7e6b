// Bench-only AssemblyScript entry (excluded from tsconfig.json: it is AssemblyScript, not TypeScript) (compiled by bench/micro/costs.ts with the release flags, -O3 and
// the incremental runtime): runs the plugin's own pure code in loops inside Wasm so the host's
// timer measures only it. setInput() copies the input (a body or a metrics text) once.
import { parseJson } from "../../assembly/json/parse";
import { KeyOptions, prefixLevelKeys } from "../../assembly/prefix/keys";
import { parseEngineMetrics } from "../../assembly/metrics/engine_metrics";
import { utf8DecodeLossy } from "../../assembly/util/utf8";
import { parseUpstreamHosts } from "../../assembly/services/candidates/upstream_hosts";
import { metricsTextOf } from "../../assembly/services/metrics_view/extract";

let input: Uint8Array = new Uint8Array(0);
let text: string = "";

export function inputBuffer(len: i32): usize {
  input = new Uint8Array(len);
  return input.dataStart;
}

export function inputReady(): void {
  text = utf8DecodeLossy(input);
}

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

/** endpoint_metrics' per-host work when a host's /metrics text changed. */
export function parseMetrics(iterations: i32): i32 {
  let valid = 0;
  for (let i = 0; i < iterations; i++) if (parseEngineMetrics(text).valid) valid++;
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
      if (parseEngineMetrics(metricsTextOf(snap, snap.hosts[h])).valid) valid++;
    }
  }
  return valid;
}
