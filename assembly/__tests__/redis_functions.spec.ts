// Whether script calls go as FCALL (redis/functions.ts): which error replies mean "no functions
// here", when the library is loaded, and when functions are given up.
import {
  FunctionSupport, FN_ERROR_IS_THE_SCRIPTS, FN_RESEND, FN_RESEND_AND_LOAD, FORGETS_WITHIN_MS, LOAD_RETRY_MS, LOST_BEFORE_PROBE,
  refusesFunctions,
} from "../redis/functions";

describe("refusesFunctions", () => {
  it("recognises Redis < 7, ACLs and proxies", () => {
    expect(refusesFunctions("ERR unknown command 'FCALL', with args beginning with: 'llmlb_x_acquire' ")).toBe(true);
    expect(refusesFunctions("ERR unknown command `FUNCTION`, with args beginning with: `LOAD` ")).toBe(true);
    expect(refusesFunctions("NOPERM User nofn has no permissions to run the 'fcall' command")).toBe(true);
    expect(refusesFunctions("ERR command FCALL not supported")).toBe(true);
    expect(refusesFunctions("ERR Unsupported command")).toBe(true);
    expect(refusesFunctions("ERR handle request, command 'FCALL' is not allowed")).toBe(true);
  });
  it("leaves the scripts' own errors and transient states to the caller", () => {
    expect(refusesFunctions("ERR acquire: cost must be an integer")).toBe(false);
    expect(refusesFunctions("OOM command not allowed when used memory > 'maxmemory'.")).toBe(false);
    expect(refusesFunctions("READONLY You can't write against a read only replica.")).toBe(false);
    expect(refusesFunctions("BUSY Redis is busy running a script.")).toBe(false);
    expect(refusesFunctions("LOADING Redis is loading the dataset in memory")).toBe(false);
  });
  it("a key the ACL does not allow refuses the call, not FCALL (Redis 7.0's text)", () => {
    expect(refusesFunctions("NOPERM this user has no permissions to access one of the keys used as arguments")).toBe(false);
    expect(refusesFunctions("NOPERM this user has no permissions to run the 'fcall' command")).toBe(true);
  });
});

describe("FunctionSupport", () => {
  it("a load refused by Redis's passing state (loading, OOM, a replica, a busy script) is tried again, not given up", () => {
    const f = new FunctionSupport();
    expect(f.onCallError("ERR Function not found", 0, 10)).toBe(FN_RESEND_AND_LOAD);
    f.onLoadReply(true, true, "LOADING Redis is loading the dataset in memory", 12);
    expect(f.isOff()).toBe(false);
    expect(f.use()).toBe(true);
    expect(f.onCallError("ERR Function not found", 20, 20 + LOAD_RETRY_MS)).toBe(FN_RESEND_AND_LOAD);
    f.onLoadReply(true, true, "OOM command not allowed when used memory > 'maxmemory'.", 30 + LOAD_RETRY_MS);
    expect(f.isOff()).toBe(false);
    f.onLoadReply(true, true, "ERR Error registering functions", 40 + LOAD_RETRY_MS);
    expect(f.isOff()).toBe(true);
  });

  it("loads once on a miss, sends EVALSHA while the load is out, FCALL again once it is in", () => {
    const f = new FunctionSupport();
    expect(f.use()).toBe(true);
    expect(f.onCallError("ERR Function not found", 0, 10)).toBe(FN_RESEND_AND_LOAD);
    expect(f.use()).toBe(false);
    expect(f.onCallError("ERR Function not found", 5, 11)).toBe(FN_RESEND); // already loading
    f.onLoadReply(true, false, "", 12);
    expect(f.use()).toBe(true);
    expect(f.isOff()).toBe(false);
  });
  it("retries a load that got no answer, at most every LOAD_RETRY_MS", () => {
    const f = new FunctionSupport();
    expect(f.onCallError("ERR Function not found", 0, 100)).toBe(FN_RESEND_AND_LOAD);
    f.onLoadReply(false, false, "", 200); // network failure
    expect(f.use()).toBe(true);
    expect(f.onCallError("ERR Function not found", 300, 400)).toBe(FN_RESEND);
    expect(f.onCallError("ERR Function not found", 300, 100 + LOAD_RETRY_MS)).toBe(FN_RESEND_AND_LOAD);
  });
  it("takes 'already exists' as loaded, and any other load error as the end of functions", () => {
    const ok = new FunctionSupport();
    ok.onCallError("ERR Function not found", 0, 1);
    ok.onLoadReply(true, true, "ERR Library 'llmlb_x' already exists", 2);
    expect(ok.use()).toBe(true);
    const bad = new FunctionSupport();
    bad.onCallError("ERR Function not found", 0, 1);
    bad.onLoadReply(true, true, "NOPERM this user has no permissions to run the 'function|load' command", 2);
    expect(bad.use()).toBe(false);
    expect(bad.isOff()).toBe(true);
    expect(bad.offReason.includes("NOPERM")).toBe(true);
  });
  it("reloads a library lost long after its load, gives up on one lost within FORGETS_WITHIN_MS", () => {
    const f = new FunctionSupport();
    f.onCallError("ERR Function not found", 0, 0);
    f.onLoadReply(true, false, "", 10);
    // A call sent before the load landed does not count against it.
    expect(f.onCallError("ERR Function not found", 5, 20)).toBe(FN_RESEND);
    expect(f.isOff()).toBe(false);
    const later = 10 + FORGETS_WITHIN_MS;
    expect(f.onCallError("ERR Function not found", later, later + 1)).toBe(FN_RESEND_AND_LOAD);
    f.onLoadReply(true, false, "", later + 2);
    expect(f.onCallError("ERR Function not found", later + 3, later + 4)).toBe(FN_RESEND);
    expect(f.isOff()).toBe(true);
    expect(f.offReason.includes("not found")).toBe(true);
  });
  it("hands a script's own error back, and stops for good on a refusal", () => {
    const f = new FunctionSupport();
    expect(f.onCallError("ERR acquire: cost must be an integer", 0, 1)).toBe(FN_ERROR_IS_THE_SCRIPTS);
    expect(f.use()).toBe(true);
    expect(f.onCallError("ERR unknown command 'FCALL'", 0, 2)).toBe(FN_RESEND);
    expect(f.use()).toBe(false);
    expect(f.onCallError("ERR Function not found", 0, 1e9)).toBe(FN_RESEND); // never loads again
  });
  it("a proxy that drops FCALL: lost FCALLs before any reply, then an EVALSHA answered, end functions", () => {
    const f = new FunctionSupport();
    for (let i = 0; i < LOST_BEFORE_PROBE - 1; i++) { f.onLost(true); expect(f.use()).toBe(true); }
    f.onLost(true);
    expect(f.use()).toBe(false); // the next script call is the EVALSHA probe
    f.onReplied(false);
    expect(f.isOff()).toBe(true);
    expect(f.offReason.includes("lost")).toBe(true);
  });
  it("an outage is not a proxy: the probe lost too puts FCALL back, and losses after a reply count for nothing", () => {
    const f = new FunctionSupport();
    for (let i = 0; i < LOST_BEFORE_PROBE; i++) f.onLost(true);
    f.onLost(false); // the EVALSHA probe lost as well: the network
    expect(f.use()).toBe(true);
    expect(f.isOff()).toBe(false);
    f.onReplied(true); // an FCALL answered: confirmed
    for (let i = 0; i < 10; i++) f.onLost(true);
    expect(f.use()).toBe(true);
    f.onReplied(false);
    expect(f.isOff()).toBe(false);
  });
});
