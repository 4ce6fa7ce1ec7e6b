// Per-host state a VM keeps for as long as it lives (caches, moving averages) is keyed by address,
// and pods come and go with new addresses (every rolling update in Kubernetes): without a bound a
// long-lived VM keeps every address it ever saw. HOSTS_KEPT is that bound.

/** Hosts whose per-host state a map keeps at most. */
export const HOSTS_KEPT: i32 = 4096;

/** Makes room for `key` in `m`: when `m` holds HOSTS_KEPT entries and not `key`, it is emptied (the
 *  state is a cache or an estimate that is learned again). */
export function roomFor<V>(m: Map<string, V>, key: string): void {
  if (m.size >= HOSTS_KEPT && !m.has(key)) m.clear();
}
