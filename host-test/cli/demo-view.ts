// The demo's live terminal view: one progress line, one row per simulated pod (requests in flight
// in the engine, its queue, KV-cache use, KV prefix hit rate, requests it served) and the policy's
// last decisions (from the plugin's detail log). Pure text; the caller redraws it in place on a
// terminal or prints it every few seconds into a log. Failure behaviour: none (pure).

export interface PodView {
  name: string;
  /** Engine state now (host-test/sim EngineSnapshot fields). */
  running: number;
  waiting: number;
  kvUsage: number;
  prefixQueriedTokens: number;
  prefixHitTokens: number;
  /** Requests the pod finished in this run. */
  served: number;
}

export interface DemoProgress {
  done: number;
  expected: number;
  inFlight: number;
  failed: number;
  elapsedWallMs: number;
  expectedWallMs: number;
}

export interface Decision { pod: string; reason: string; load: string }

const PICK_LINE = /(?:^|\] )picked (\S+) reason=(\S+) load=(\S+)/;

/** A decision from one plugin detail-log line ("[ai-load-balancer] picked <ip:port> reason=<r> load=<n> cost=<c>"). */
export function parseDecision(message: string, podByAddress: ReadonlyMap<string, string>): Decision | null {
  const m = PICK_LINE.exec(message);
  if (!m) return null;
  return { pod: podByAddress.get(m[1]) ?? m[1], reason: m[2], load: m[3] };
}

const pct = (v: number) => `${Math.round(100 * v)}%`;
const pad = (s: string | number, n: number) => String(s).padStart(n);

export function renderDemoView(label: string, p: DemoProgress, pods: readonly PodView[], decisions: readonly Decision[] | null): string[] {
  const width = 20;
  const share = p.expected > 0 ? Math.min(1, p.done / p.expected) : 0;
  const filled = Math.round(share * width);
  const lines = [
    `${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${p.done}/${p.expected} done, ${p.inFlight} in flight, ${p.failed} failed, ${(p.elapsedWallMs / 1000).toFixed(0)} s (arrivals stop at ${(p.expectedWallMs / 1000).toFixed(0)} s, then it drains)`,
    "  pod      in flight  queue  KV use  KV hit  served",
  ];
  for (const pod of pods) {
    const hit = pod.prefixQueriedTokens > 0 ? pod.prefixHitTokens / pod.prefixQueriedTokens : 0;
    lines.push(`  ${pod.name.padEnd(8)} ${pad(pod.running + pod.waiting, 9)}  ${pad(pod.waiting, 5)}  ${pad(pct(pod.kvUsage), 6)}  ${pad(pct(hit), 6)}  ${pad(pod.served, 6)}`);
  }
  if (decisions === null) lines.push("  last picks: none (plugin off: the cluster's own round robin)");
  else lines.push(`  last picks: ${decisions.length === 0 ? "-" : decisions.map((d) => `${d.pod} ${d.reason} load=${d.load}`).join(" | ")}`);
  return lines;
}
