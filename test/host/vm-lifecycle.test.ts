// Audit rows 2, 8 and 9 (host-test/README.md fidelity table): the HTTP/3 deferred-log order, VM
// recovery after a trap (Higress: a later stream on the worker, at most once per 5 s), and
// configuration updates through a new root context on the same VM while the old root drains.
import { beforeAll, describe, expect, it } from "vitest";
import { TestHost } from "../../host-test/facade/index.js";
import { buildGuest } from "./guests/build.js";

let g: string, higress: string;
beforeAll(async () => { [g, higress] = await Promise.all([buildGuest("scripted-100"), buildGuest("higress-100")]); });
const clusters = { c: [{ address: "10.0.0.1:8000" }] };
const endLogs = (h: TestHost, ctx: number) =>
  h.logMessages().filter((m) => /^(done|log|delete) ctx=/.test(m) && m.includes(`ctx=${ctx} `) || m === `done ctx=${ctx}` || m === `delete ctx=${ctx}`)
    .map((m) => m.split(" ")[0]);

describe("stream end order", () => {
  it("HTTP/3 deferred logging: done, delete, then log (the context is already gone)", async () => {
    const h = await TestHost.create({ wasm: g, clusters, profile: { endOrder: "deferred-log" } });
    const s = h.stream();
    s.sendRequestHeaders(true);
    s.sendResponseHeaders({ ":status": "200" }, true);
    s.complete();
    expect(endLogs(h, s.contextId)).toEqual(["done", "delete", "log"]);
  });
});

describe("VM recovery after a trap", () => {
  it("the next stream on the worker gets a fresh, configured VM; a second failure waits 5 s", async () => {
    const h = await TestHost.create({ wasm: g, clusters, configuration: "tick=1000" });
    const first = h.vms[0];
    h.stream({ headers: { "x-headers-action": "trap" } }).sendRequestHeaders(true);
    expect(first.failed).toBe(true);

    const s = h.stream();
    s.sendRequestHeaders(true);
    expect(h.plugin.recoveries).toBe(1);
    expect(h.vms[0]).not.toBe(first);
    expect(h.vms[0].failed).toBe(false);
    expect(s.forwarded?.ended).toBe(true);
    expect(h.logMessages().filter((m) => m.startsWith("configure status=0"))).toHaveLength(2);
    // The dead VM's tick is gone; the new VM ticks (configure ran again).
    h.advance(1000);
    expect(h.logMessages().filter((m) => m.startsWith("tick 1 "))).toHaveLength(1);

    h.stream({ headers: { "x-headers-action": "trap" } }).sendRequestHeaders(true);
    const early = h.stream();
    early.sendRequestHeaders(true);
    expect(early.response.status).toBe(503);
    expect(h.plugin.recoveries).toBe(1);
    h.advance(4000);
    const late = h.stream();
    late.sendRequestHeaders(true);
    expect(h.plugin.recoveries).toBe(2);
    expect(late.forwarded?.ended).toBe(true);
  });

  it("the recovered VM runs redis_init again and its calls work", async () => {
    const RC = "outbound|6379||redis.static";
    const h = await TestHost.create({ wasm: higress, clusters, redisClusters: [RC], configuration: `redis=${RC}` });
    h.stream({ headers: { "x-redis-cmd": "GET k" } }).sendRequestHeaders(true);
    // A trap while the VM holds a stream: that stream fails closed when its reply comes.
    h.vms[0].fail("test trap");
    h.redisCalls[0].reply("$-1\r\n");
    const s = h.stream({ headers: { "x-redis-cmd": "INCR k" } });
    s.sendRequestHeaders(true);
    expect(h.logMessages().filter((m) => m === "redis_init status=0")).toHaveLength(2);
    h.redisCalls[0].reply(":1\r\n");
    expect(s.forwarded?.ended).toBe(true);
  });

  it("profile vmRecoveryIntervalMs 0 (upstream Envoy): a failed VM stays failed", async () => {
    const h = await TestHost.create({ wasm: g, clusters, profile: { vmRecoveryIntervalMs: 0 } });
    h.stream({ headers: { "x-headers-action": "trap" } }).sendRequestHeaders(true);
    h.advance(60_000);
    const s = h.stream();
    s.sendRequestHeaders(true);
    expect(s.response.status).toBe(503);
    expect(h.plugin.recoveries).toBe(0);
  });
});

describe("configuration update", () => {
  it("a new root context on the same VM; the old root drains, then gets done and delete", async () => {
    const h = await TestHost.create({ wasm: g, clusters, configuration: "tick=100" });
    const vm = h.vms[0];
    const oldRoot = vm.root.id;
    const inFlight = h.stream();
    inFlight.sendRequestHeaders(true);
    expect(h.updateConfiguration("tick=50")).toEqual([true]);
    expect(h.vms[0]).toBe(vm);
    const newRoot = vm.root.id;
    expect(newRoot).not.toBe(oldRoot);
    expect(h.logMessages()).toContain(`create ctx=${newRoot} parent=0`);
    expect(h.logMessages()).toContain("configure status=0 config=tick=50");
    expect(h.plugin.liveRoots).toBe(2);

    const fresh = h.stream();
    fresh.sendRequestHeaders(true);
    expect(h.logMessages()).toContain(`create ctx=${fresh.contextId} parent=${newRoot}`);
    expect(h.logMessages()).not.toContain(`done ctx=${oldRoot}`);

    inFlight.sendResponseHeaders({ ":status": "200" }, true);
    inFlight.complete();
    expect(h.logMessages()).toContain(`done ctx=${oldRoot}`);
    expect(h.logMessages()).toContain(`delete ctx=${oldRoot}`);
    expect(h.plugin.liveRoots).toBe(1);
    // Only the new root ticks now.
    h.advance(100);
    expect(h.logMessages().filter((m) => m.startsWith("tick ") && m.includes(`root=${oldRoot}`))).toHaveLength(0);
    expect(h.logMessages().filter((m) => m.startsWith("tick ") && m.includes(`root=${newRoot}`))).toHaveLength(2);
  });

  it("with no stream in flight the old root ends at once; repeated updates leave one root", async () => {
    const h = await TestHost.create({ wasm: g, clusters });
    for (let i = 0; i < 5; i++) h.updateConfiguration(`n=${i}`);
    expect(h.plugin.liveRoots).toBe(1);
    expect(h.vms[0].contexts.size).toBe(1);
  });
});
