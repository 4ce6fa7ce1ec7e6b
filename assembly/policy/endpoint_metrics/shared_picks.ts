// rate_limit across the VMs of one gateway (Higress keeps the window per VM, so with N worker VMs
// one host can take N times its share): the pick window lives in shared data and each pick is
// appended with compare-and-swap, retried a few times; after that (heavy contention) the pick is
// kept in this VM's copy only. Scope "vm" keeps Higress's per-VM window.
// Failure behaviour: never throws; unreadable shared data counts as an empty window.
import * as host from "../../host/calls";
import { PickWindow } from "./pick_window";

const CAS_RETRIES = 4;

export class SharedPicks {
  readonly window: PickWindow;
  private cas: u32 = 0;

  constructor(public key: string, public shared: bool, capacity: i32, windowMs: f64) {
    this.window = new PickWindow(capacity, windowMs);
  }

  /** Loads the gateway's window into `window` (no-op for per-VM scope). */
  refresh(): void {
    if (!this.shared) return;
    const cur = host.getSharedData(this.key);
    if (cur.status == host.Status.Ok) {
      this.window.decode(cur.value);
      this.cas = cur.cas;
    } else {
      this.cas = 0;
    }
  }

  /** Empties the shared window `key` (Envoy's shared data cannot delete a key). */
  empty(key: string): void {
    host.setSharedData(key, new ArrayBuffer(0), 0);
  }

  record(address: string, now: f64): void {
    this.window.push(address, now);
    if (!this.shared) return;
    for (let attempt = 0; attempt < CAS_RETRIES; attempt++) {
      const st = host.setSharedData(this.key, this.window.encode(), this.cas);
      if (st == host.Status.Ok) {
        const after = host.getSharedData(this.key);
        this.cas = after.status == host.Status.Ok ? after.cas : 0;
        return;
      }
      if (st != host.Status.CasMismatch) return;
      // Another VM picked meanwhile: take its window and append our pick again.
      this.refresh();
      this.window.push(address, now);
    }
  }
}
