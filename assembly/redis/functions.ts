// Redis functions (Redis >= 7.0): the plugin's scripts are also one function library
// (scripts/lua-bundle.mjs libraryJoin, joined by services/lease/lua_text.ts), called with FCALL. A script sent as EVALSHA runs lib.lua's
// definitions again on every call; a function finds them made once, when its library loaded
// (about a fifth of an acquire's time in Redis, bench/RESULTS.md section 5).
// What is decided here, per Redis client:
// - FCALL while nothing says otherwise; "Function not found" (a new library version, a Redis that
//   restarted empty or was flushed) re-sends that call as EVALSHA and loads the library once
//   (FUNCTION LOAD, at most every LOAD_RETRY_MS; "already exists" is success: another gateway was
//   first). Script calls go as EVALSHA while the load is in flight.
// - EVALSHA for good (until the next configuration) when Redis refuses functions: Redis < 7
//   (unknown command), an ACL without FCALL or FUNCTION (NOPERM), a proxy that does not pass them,
//   a load that fails otherwise, or a library that is gone again within FORGETS_WITHIN_MS of its
//   load (a proxy spreading calls over servers that do not share functions).
// - A proxy may also close the connection on a command it does not know (twemproxy does): before
//   any FCALL got a reply, LOST_BEFORE_PROBE FCALLs lost in a row send the next script call as
//   EVALSHA; if that one gets a reply, FCALL is what fails: EVALSHA for good. If it is lost too,
//   the network is at fault and FCALL goes on. Once an FCALL got a reply, losses are outages.
// A function's own error reply (the script refused its arguments) is the caller's, as with EVALSHA.

/** A Lua text joined from embedded pieces when it is sent (services/lease/lua_text.ts). */
export abstract class LuaText {
  abstract build(): string;
}

export class LuaLibrary {
  /** text: what FUNCTION LOAD takes (starts with `#!lua name=<name>`). */
  constructor(public name: string, public text: LuaText) {}
}

export const LOAD_RETRY_MS: f64 = 5000;
export const FORGETS_WITHIN_MS: f64 = 10000;
export const LOST_BEFORE_PROBE: i32 = 3;

/** What to do with an FCALL's error reply. */
export const FN_ERROR_IS_THE_SCRIPTS: i32 = 0;
export const FN_RESEND: i32 = 1;
export const FN_RESEND_AND_LOAD: i32 = 2;

/** Whether Redis's error reply says this server (or this user) cannot run FCALL / FUNCTION. */
export function refusesFunctions(err: string): bool {
  // NOPERM for a key (the ACL lacks the call's key pattern) refuses the call, not FCALL: EVALSHA
  // of the same keys gets the same answer.
  if (err.startsWith("NOPERM")) return !err.includes(" keys ") && !err.includes(" key ");
  const low = err.toLowerCase();
  return low.includes("unknown command") || low.includes("not supported") || low.includes("unsupported")
    || low.includes("is not allowed");
}

/** Whether an error reply is Redis's passing state (loading, out of memory, a replica during a
 *  failover, a busy script), not an answer about functions: the load is tried again later. */
export function transientError(err: string): bool {
  return err.startsWith("LOADING") || err.startsWith("OOM") || err.startsWith("READONLY") || err.startsWith("BUSY")
    || err.startsWith("MASTERDOWN") || err.startsWith("TRYAGAIN") || err.startsWith("CLUSTERDOWN") || err.startsWith("NOREPLICAS");
}

export class FunctionSupport {
  /** Set once functions are given up; the text says why (logged once). */
  offReason: string = "";
  private off: bool = false;
  private loading: bool = false;
  private lastLoadMs: f64 = -1e18;
  private loadedMs: f64 = -1e18;
  /** An FCALL got a reply (any: a function's own error too) on this client. */
  private confirmed: bool = false;
  /** FCALLs lost in a row before any reply; the EVALSHA probe is out. */
  private lost: i32 = 0;
  private probing: bool = false;

  /** Whether the next script call goes as FCALL. */
  use(): bool { return !this.off && !this.loading && !this.probing; }

  /** A script call got a reply (via FCALL or as EVALSHA / EVAL). */
  onReplied(viaFunction: bool): void {
    if (viaFunction) { this.confirmed = true; this.lost = 0; return; }
    if (this.probing) {
      this.probing = false;
      this.stop(LOST_BEFORE_PROBE.toString() + " FCALLs lost (connection closed) where EVALSHA gets a reply");
    }
  }

  /** A script call was lost (network error, timeout): no reply. */
  onLost(viaFunction: bool): void {
    if (this.off || this.confirmed) return;
    if (!viaFunction) {
      if (this.probing) { this.probing = false; this.lost = 0; } // the network, not FCALL
      return;
    }
    this.lost++;
    if (this.lost >= LOST_BEFORE_PROBE) this.probing = true;
  }

  isOff(): bool { return this.off; }

  /** An FCALL sent at sentMs came back with the error reply err. */
  onCallError(err: string, sentMs: f64, now: f64): i32 {
    const missing = err.startsWith("ERR Function not found");
    if (this.off) return missing || refusesFunctions(err) ? FN_RESEND : FN_ERROR_IS_THE_SCRIPTS; // an FCALL sent before
    if (missing) {
      if (sentMs >= this.loadedMs && now - this.loadedMs < FORGETS_WITHIN_MS) {
        this.stop("the library loaded " + (<i64>(now - this.loadedMs)).toString() + " ms ago is not found");
        return FN_RESEND;
      }
      if (this.loading || now - this.lastLoadMs < LOAD_RETRY_MS) return FN_RESEND;
      this.loading = true;
      this.lastLoadMs = now;
      return FN_RESEND_AND_LOAD;
    }
    if (refusesFunctions(err)) { this.stop(err); return FN_RESEND; }
    return FN_ERROR_IS_THE_SCRIPTS;
  }

  /** The FUNCTION LOAD could not be sent. */
  loadNotSent(): void { this.loading = false; }

  /** FUNCTION LOAD's reply (ok = false: network failure or timeout, retried on a later miss, as
   *  is a transient error reply). */
  onLoadReply(ok: bool, isError: bool, err: string, now: f64): void {
    this.loading = false;
    if (!ok) return;
    if (!isError || err.includes("already exists")) { this.loadedMs = now; return; }
    if (transientError(err)) return;
    this.stop(err);
  }

  private stop(reason: string): void {
    this.off = true;
    this.offReason = reason.length > 160 ? reason.substring(0, 160) + "..." : reason;
  }
}
