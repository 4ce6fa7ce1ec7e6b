// The streams this VM has open on each host of one pool, as predicted_latency knows them: pick
// time, expected output tokens (max_tokens, else expectedOutputTokens), the predicted TTFT
// without a slot wait, first chunk and SSE events seen so far. From them, the wait for a batch
// slot on a host (slot_wait.ts): when the host's streams fill its slots, when does one free?
// Streams of other gateways are only known as a count (the fleet's in flight from Redis, minus
// this VM's streams there): each counts as an average stream of that host, half way through its
// service time while slots are free for it, its whole service time when queued behind them; the
// average is this VM's mean decode time on the host (EWMA of first chunk -> end), else the
// model's TPOT x expectedOutputTokens, plus the host's predicted TTFT without a wait.
// Also the prefill ahead: uncached prompt tokens of the streams not started yet (a TTFT feature).
// Failure behaviour: none on the request path (no throw; a missing entry is a no-op).
import { ResponseTally } from "./response_scan";
import { remainingDecode, slotWait } from "./slot_wait";

/** Weight of the newest finished stream in a host's mean decode time. */
const DECODE_ALPHA: f64 = 0.1;

/** One open stream: what the pick knew (the model's features too), and what the response showed. */
export class OpenStream {
  tally: ResponseTally = new ResponseTally();
  firstMs: f64 = 0;
  /** When the last body chunk came (0: none yet). */
  lastMs: f64 = 0;
  endMs: f64 = 0;
  status: i32 = 0;
  constructor(public address: string, public pickedMs: f64, public expected: f64, public uncached: f64,
    public inflight: f64, public wait: f64, public baseTtft: f64, public predTtft: f64, public predTpot: f64,
    public prefillAhead: f64 = 0) {}
}

export class OpenStreams {
  private byHost: Map<string, OpenStream[]> = new Map();
  private decodeMs: Map<string, f64> = new Map();
  private busy: f64[] = new Array<f64>(0);
  private pendingNow: f64[] = new Array<f64>(0);
  private pendingService: f64[] = new Array<f64>(0);
  private slotTimes: f64[] = new Array<f64>(0);

  add(s: OpenStream): void {
    if (!this.byHost.has(s.address)) this.byHost.set(s.address, new Array<OpenStream>(0));
    this.byHost.get(s.address).push(s);
  }

  /** The stream ended (however): no longer open; a full stream teaches the host's decode time. */
  remove(s: OpenStream): void {
    if (s.firstMs > 0 && s.endMs >= s.firstMs && s.status == 200) {
      const d = s.endMs - s.firstMs;
      const prev = this.decodeMs.has(s.address) ? this.decodeMs.get(s.address) : d;
      this.decodeMs.set(s.address, prev + DECODE_ALPHA * (d - prev));
    }
    if (!this.byHost.has(s.address)) return;
    const list = this.byHost.get(s.address);
    const at = list.indexOf(s);
    if (at < 0) return;
    list.splice(at, 1);
    if (list.length == 0) this.byHost.delete(s.address);
  }

  /** Uncached prompt tokens of this VM's streams on `address` not started yet (prefill ahead). */
  prefillAhead(address: string): f64 {
    if (!this.byHost.has(address)) return 0;
    const list = this.byHost.get(address);
    let t: f64 = 0;
    for (let i = 0; i < list.length; i++) if (list[i].firstMs == 0) t += list[i].uncached;
    return t;
  }

  /** This VM's open streams on `address`. */
  count(address: string): i32 {
    return this.byHost.has(address) ? this.byHost.get(address).length : 0;
  }

  /**
   * Predicted ms until a batch slot frees on `address` for a new request: this VM's streams there
   * plus (fleet in flight - this VM's) average streams of other gateways. `tpot`: the host's
   * predicted TPOT at a full batch; `baseTtft`: its predicted TTFT without a wait (a queued
   * stream's prefill); `fallbackTokens`: output tokens of an unknown stream before any finished.
   */
  waitFor(address: string, fleetInflight: f64, slots: i32, tpot: f64, baseTtft: f64, fallbackTokens: f64, now: f64): f64 {
    if (slots <= 0 || !(tpot > 0)) return 0;
    const own = this.count(address);
    const others = <i32>max(0.0, Math.round(fleetInflight) - <f64>own);
    if (own + others < slots) return 0;
    const base = baseTtft > 0 ? baseTtft : 0.0;
    // Scratch arrays reused across calls (no allocation per candidate).
    const busy = this.busy;
    const pendingNow = this.pendingNow;
    const pendingService = this.pendingService;
    busy.length = 0;
    pendingNow.length = 0;
    pendingService.length = 0;
    if (own > 0) {
      const list = this.byHost.get(address);
      for (let i = 0; i < list.length; i++) {
        const s = list[i];
        const decode = max(0.0, s.expected - 1.0) * tpot;
        if (s.firstMs > 0) {
          busy.push(remainingDecode(s.expected, <f64>s.tally.events, now - s.firstMs, now - s.lastMs, tpot));
        } else {
          pendingNow.push(max(0.0, s.pickedMs + s.baseTtft - now) + decode);
          pendingService.push(s.baseTtft + decode);
        }
      }
    }
    if (others > 0) {
      const service = base + (this.decodeMs.has(address) ? this.decodeMs.get(address) : max(0.0, fallbackTokens - 1.0) * tpot);
      // Others are older than this VM's pending streams as often as not: they hold slots first.
      for (let k = 0; k < others; k++) {
        if (busy.length < slots) busy.push(service / 2);
        else { pendingNow.unshift(service / 2); pendingService.unshift(service); }
      }
    }
    return slotWait(busy, pendingNow, pendingService, slots, this.slotTimes);
  }
}
