// An Envoy-like HTTP header map: ordered, keys lowercased (Envoy stores LowerCaseString keys, so
// Proxy-Wasm lookups are case-insensitive), repeated keys allowed. Failure behaviour: none (pure).
import type { Pair } from "./pairs.js";

export type HeaderInput = Record<string, string> | ReadonlyArray<readonly [string, string]>;

export class HeaderMap {
  private entries: Pair[] = [];

  constructor(input?: HeaderInput) {
    if (!input) return;
    const list = Array.isArray(input) ? input : Object.entries(input as Record<string, string>);
    for (const [k, v] of list) this.add(k, v);
  }

  static from(input?: HeaderInput | HeaderMap): HeaderMap {
    return input instanceof HeaderMap ? input.clone() : new HeaderMap(input);
  }

  clone(): HeaderMap {
    const m = new HeaderMap();
    m.entries = this.entries.map(([k, v]) => [k, v]);
    return m;
  }

  /** Number of entries: what Envoy passes as `num_headers` to proxy_on_*_headers. */
  get count(): number { return this.entries.length; }

  /** Envoy HeaderMap::byteSize() (sum of key and value lengths): proxy_get_header_map_size. */
  get byteSize(): number {
    let n = 0;
    for (const [k, v] of this.entries) n += Buffer.byteLength(k) + Buffer.byteLength(v);
    return n;
  }

  /** First value for the key (Envoy's getHeaderMapValue returns the first entry). */
  get(key: string): string | undefined {
    const lk = key.toLowerCase();
    const e = this.entries.find(([k]) => k === lk);
    return e ? e[1] : undefined;
  }

  getAll(key: string): string[] {
    const lk = key.toLowerCase();
    return this.entries.filter(([k]) => k === lk).map(([, v]) => v);
  }

  has(key: string): boolean { return this.get(key) !== undefined; }

  /** A new entry goes last, a pseudo-header after the other pseudo-headers (Envoy
   *  HeaderMapImpl::HeaderList::insert keeps pseudo-headers first). Not emulated: Envoy appends
   *  the value of an existing O(1) inline header (content-type, user-agent, ...) to that entry
   *  with a comma instead of adding one (insertByKey). */
  add(key: string, value: string): void {
    const lk = key.toLowerCase();
    if (!lk.startsWith(":")) { this.entries.push([lk, value]); return; }
    const firstRegular = this.entries.findIndex(([k]) => !k.startsWith(":"));
    this.entries.splice(firstRegular < 0 ? this.entries.length : firstRegular, 0, [lk, value]);
  }

  /** Envoy HeaderMapImpl::setCopy (envoy-1.27 header_map_impl.cc): every value of the key is
   *  removed, then the new one added (last, or among the pseudo-headers). */
  replace(key: string, value: string): void {
    this.remove(key);
    this.add(key, value);
  }

  /** Removes every occurrence; removing an absent key is not an error (Envoy remove()). */
  remove(key: string): void {
    const lk = key.toLowerCase();
    this.entries = this.entries.filter(([k]) => k !== lk);
  }

  setAll(pairs: ReadonlyArray<readonly [string, string]>): void {
    this.entries = [];
    for (const [k, v] of pairs) this.add(k, v);
  }

  pairs(): Pair[] { return this.entries.map(([k, v]) => [k, v]); }

  /** Plain object view (repeated keys joined with ","), handy in tests. */
  toObject(): Record<string, string> {
    const o: Record<string, string> = {};
    for (const [k, v] of this.entries) o[k] = k in o ? `${o[k]},${v}` : v;
    return o;
  }
}
