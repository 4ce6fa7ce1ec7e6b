// SCRATCH experiment: shared data visible across gateways with a delay (what Redis-shared records would be).
import { WasmResult } from "../../host-test/abi/constants.js";
import type { EventClock } from "./event-clock.js";

interface Entry { value: Buffer; cas: number; at: number; writer: number }
const stores = new WeakMap<object, Map<string, Entry[]>>();
let nextCas = 1;

export class DelayedSharedView {
  private store: Map<string, Entry[]>;
  constructor(private clock: EventClock, private gw: number, private delayMs: number) {
    let m = stores.get(clock);
    if (!m) { m = new Map(); stores.set(clock, m); }
    this.store = m;
  }
  get(vmId: string, key: string): { status: number; value?: Buffer; cas?: number } {
    const h = this.store.get(vmId + "\0" + key);
    if (!h || h.length === 0) return { status: WasmResult.NotFound };
    const now = this.clock.now();
    for (let i = h.length - 1; i >= 0; i--) {
      const e = h[i];
      if (e.writer === this.gw || e.at <= now - this.delayMs || i === 0) return { status: WasmResult.Ok, value: e.value, cas: e.cas };
    }
    return { status: WasmResult.NotFound };
  }
  set(vmId: string, key: string, value: Buffer, cas: number): number {
    const k = vmId + "\0" + key;
    let h = this.store.get(k);
    if (!h) { h = []; this.store.set(k, h); }
    const last = h[h.length - 1];
    if (last && cas !== 0 && cas !== last.cas) return WasmResult.CasMismatch;
    const now = this.clock.now();
    h.push({ value: Buffer.from(value), cas: nextCas++, at: now, writer: this.gw });
    while (h.length > 2 && h[1].at <= now - this.delayMs - 50) h.shift();
    return WasmResult.Ok;
  }
}
