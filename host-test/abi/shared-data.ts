// Shared key/value data and shared queues, per process and per vm_id (proxy-wasm-cpp-host
// src/shared_data.cc, src/shared_queue.cc). Failure behaviour: statuses, never throws.
import { WasmResult } from "./constants.js";

/** What a VM's shared-data calls reach (per process and vm_id in Envoy; a bench may give another). */
export interface SharedDataStore {
  get(vmId: string, key: string): { status: number; value?: Buffer; cas?: number };
  set(vmId: string, key: string, value: Buffer, cas: number): number;
  /** The keys under vmId (for tests: Envoy has no list call). */
  keys(vmId: string): string[];
}

export class SharedData implements SharedDataStore {
  private maps = new Map<string, Map<string, { value: Buffer; cas: number }>>();
  private nextCas = 1;

  private map(vmId: string) {
    let m = this.maps.get(vmId);
    if (!m) { m = new Map(); this.maps.set(vmId, m); }
    return m;
  }

  get(vmId: string, key: string): { status: number; value?: Buffer; cas?: number } {
    const e = this.map(vmId).get(key);
    if (!e) return { status: WasmResult.NotFound };
    return { status: WasmResult.Ok, value: e.value, cas: e.cas };
  }

  /** The keys a vm_id has (for tests; no ABI call lists them). */
  keys(vmId: string): string[] {
    return [...this.map(vmId).keys()];
  }

  /** cas 0 = unconditional; a stale cas on an existing key is CasMismatch (cpp-host SharedData::set). */
  set(vmId: string, key: string, value: Buffer, cas: number): number {
    const m = this.map(vmId);
    const e = m.get(key);
    if (e && cas !== 0 && cas !== e.cas) return WasmResult.CasMismatch;
    m.set(key, { value: Buffer.from(value), cas: this.nextCas++ });
    return WasmResult.Ok;
  }
}

interface Queue {
  vmId: string;
  name: string;
  items: Buffer[];
  /** Called (asynchronously by the owner) when an item is enqueued: proxy_on_queue_ready. */
  notify: (token: number) => void;
}

export class SharedQueues {
  private byToken = new Map<number, Queue>();
  private byName = new Map<string, number>();
  private nextToken = 1;

  /** Registering an existing name re-binds it to the new owner and keeps the token. */
  register(vmId: string, name: string, notify: (token: number) => void): number {
    const key = `${vmId}\0${name}`;
    const existing = this.byName.get(key);
    if (existing !== undefined) {
      const q = this.byToken.get(existing);
      if (q) q.notify = notify;
      return existing;
    }
    const token = this.nextToken++;
    this.byToken.set(token, { vmId, name, items: [], notify });
    this.byName.set(key, token);
    return token;
  }

  /** The names registered under vmId (for tests: Envoy never frees a queue while its vm_id lives). */
  names(vmId: string): string[] {
    const out: string[] = [];
    for (const key of this.byName.keys()) if (key.startsWith(`${vmId}\0`)) out.push(key.slice(vmId.length + 1));
    return out;
  }

  resolve(vmId: string, name: string): number | undefined {
    return this.byName.get(`${vmId}\0${name}`);
  }

  enqueue(token: number, data: Buffer): number {
    const q = this.byToken.get(token);
    if (!q) return WasmResult.NotFound;
    q.items.push(Buffer.from(data));
    q.notify(token);
    return WasmResult.Ok;
  }

  dequeue(token: number): { status: number; data?: Buffer } {
    const q = this.byToken.get(token);
    if (!q) return { status: WasmResult.NotFound };
    const item = q.items.shift();
    if (!item) return { status: WasmResult.Empty };
    return { status: WasmResult.Ok, data: item };
  }
}
